"""The app: a FastAPI server that the sandbox runs on port 3000."""

from fastapi import FastAPI
from fastapi.responses import HTMLResponse

app = FastAPI()

PAGE = """<!doctype html>
<html lang="en">
  <head>
    <meta charset="UTF-8" />
    <meta name="viewport" content="width=device-width, initial-scale=1.0" />
    <title>sandboxd app</title>
    <style>
      body { margin: 0; min-height: 100vh; display: grid; place-items: center;
             font-family: system-ui, -apple-system, 'Segoe UI', Roboto, sans-serif;
             color: #1f2937; background: #f3f4f6; }
      main { max-width: 32rem; margin: 2rem; padding: 2rem 2.5rem; background: #fff;
             border-radius: 12px; box-shadow: 0 4px 24px rgb(0 0 0 / 8%); text-align: center; }
      h1 { margin-top: 0; font-size: 1.6rem; }
      .hint { color: #6b7280; font-size: 0.9rem; }
    </style>
  </head>
  <body>
    <main>
      <h1>Your FastAPI app is running</h1>
      <p>This is the starting point of your app. Describe what it should do
         and it will be built here.</p>
      <p class="hint">Edit <code>main.py</code>; the API docs are at
         <a href="/docs">/docs</a>.</p>
    </main>
  </body>
</html>
"""


@app.get("/", response_class=HTMLResponse)
def index() -> str:
    return PAGE


@app.get("/health")
def health() -> dict:
    return {"status": "ok"}
