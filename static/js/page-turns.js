// Page turns by physical side, for both readers (the owner's and a reading link's): the
// buttons, the arrow keys and a swipe. `forwardSide()` says which side the next page is
// on (left in right-to-left reading); `turn(step)` turns by one page either way.
export function bindPageTurns({ viewer, forwardSide, turn }) {
  const side = (which) => turn(which === forwardSide() ? 1 : -1);
  document.getElementById("turn-left").addEventListener("click", () => side("left"));
  document.getElementById("turn-right").addEventListener("click", () => side("right"));
  document.addEventListener("keydown", (event) => {
    if (event.target.closest("select, input, textarea")) return;
    if (event.key === "ArrowLeft") side("left");
    if (event.key === "ArrowRight") side("right");
  });
  let touchX = null;
  viewer.addEventListener("touchstart", (e) => { touchX = e.changedTouches[0].clientX; }, { passive: true });
  viewer.addEventListener("touchend", (e) => {
    if (touchX === null) return;
    const dx = e.changedTouches[0].clientX - touchX;
    touchX = null;
    if (Math.abs(dx) < 40) return;
    side(dx > 0 ? "left" : "right"); // a swipe to the right brings in the page from the left
  });
}
