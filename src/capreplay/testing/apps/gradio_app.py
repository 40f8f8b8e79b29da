"""A Gradio app whose answer streams back as server-sent events, with analytics and every call home switched off.

Gradio's page submits an event with a JSON POST to ``/gradio_api/queue/join`` and reads the results from
``/gradio_api/queue/data``, a ``text/event-stream`` response that stays open while the function runs: here a
generator that yields a growing greeting in several steps, so the stream carries several events spread over
time before it closes. (Gradio's client reads the stream with ``fetch`` rather than ``EventSource``; on the
wire it is the same server-sent events.)

Switched off: analytics and its version check (``GRADIO_ANALYTICS_ENABLED``), Hugging Face Hub calls
(``HF_HUB_OFFLINE``), the share link, server-side rendering (it would start Node), and the API page's links.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from capreplay.testing.apps.env import ensure_env
from capreplay.testing.apps.process import Server, running_server

REQUIREMENTS = ["gradio==6.31.0", "gradio-client==2.7.2"]
INPUT = "#name textarea"
SUBMIT = "#greet"
NAME = "Ada Lovelace"
RESULT = "Hello, Ada Lovelace! Counted 11 letters in 4 steps."
"""The streamed function's last output for :data:`NAME`."""
APP = '''"""A greeting streamed in steps (written by capreplay's test launcher)."""
import sys
import time

import gradio as gr


def greet(name):
    letters = sum(c.isalpha() for c in name)
    yield "Reading the name..."
    time.sleep(0.3)
    yield f"Hello, {name}!"
    time.sleep(0.3)
    yield f"Hello, {name}! Counting letters..."
    time.sleep(0.3)
    yield f"Hello, {name}! Counted {letters} letters in 4 steps."


with gr.Blocks(title="Greeter", analytics_enabled=False) as demo:
    gr.Markdown("# Greeter\\nType a name; the greeting streams back in steps.")
    name = gr.Textbox(label="Name", elem_id="name")
    button = gr.Button("Greet", elem_id="greet")
    greeting = gr.Textbox(label="Greeting", elem_id="greeting")
    button.click(greet, inputs=name, outputs=greeting)

demo.queue().launch(server_name="127.0.0.1", server_port=int(sys.argv[1]), share=False, ssr_mode=False,
                    inbrowser=False, show_error=True, footer_links=[])
'''


def ensure_gradio(cache: Path) -> Path:
    """The environment folder of Gradio, installed under ``cache`` if needed."""
    return ensure_env(cache / "apps" / "gradio-6.31", REQUIREMENTS, check="import gradio").bin_dir.parent


@contextmanager
def running_gradio(cache: Path, work: Path) -> Iterator[Server]:
    """The greeting app on 127.0.0.1 until the block ends."""
    venv = ensure_gradio(cache)
    work.mkdir(parents=True, exist_ok=True)
    (work / "greeter.py").write_text(APP)
    env = {"GRADIO_TEMP_DIR": str(work / "tmp"), "HF_HOME": str(work / "hf"), "MPLCONFIGDIR": str(work / "mpl")}

    def command(port: int) -> list[str]:
        return [str(venv / "bin" / "python"), str(work / "greeter.py"), str(port)]

    with running_server(command, ready_path="/config", log=work / "gradio.log", cwd=work, env=env) as server:
        yield server
