"""The image providers, a module each, named for what RENDERER calls it: each registers
itself, with the verbs it can do, in mangagen/renderers/registry.py when imported.

- procedural/: offline, Pillow; simulates a serverless GPU (the default);
- openai.py: any OpenAI-compatible images endpoint (LocalAI, stable-diffusion.cpp, OpenAI);
- replicate.py, runpod.py, comfyui.py, a1111.py: adapters of the provider layer
  (mangagen/renderers/remote.py), each only saying how its provider speaks.
"""
