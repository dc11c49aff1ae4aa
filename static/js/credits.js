// The Credits page: Buy sends the person to Stripe Checkout.
import { api, refreshNavCredits } from "./api.js";
import { gettext } from "./i18n.js";

const error = document.getElementById("checkout-error");
for (const button of document.querySelectorAll("button.buy")) {
  button.addEventListener("click", async () => {
    button.disabled = true;
    button.textContent = gettext("Opening checkout…");
    try {
      const { checkout_url: url } = await api("POST", "/api/credits/checkout/", { pack: button.dataset.pack });
      location.href = url;
    } catch (err) {
      error.textContent = err.message;
      error.hidden = false;
      button.disabled = false;
      button.textContent = gettext("Buy");
    }
  });
}

// Back from Checkout: the webhook grants; show the balance when it lands.
if (document.getElementById("checkout-success")) {
  const start = Number(document.getElementById("balance").dataset.available);
  let tries = 0;
  const poll = setInterval(async () => {
    tries += 1;
    const me = await refreshNavCredits(); // shown wherever the page shows credits
    if (me && me.credits.available !== start) {
      clearInterval(poll);
    }
    if (tries > 30) clearInterval(poll);
  }, 2000);
}
