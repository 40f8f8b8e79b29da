"""browser-use's scratch folder: the shared one, with browser-use's config folder forced inside it.

Nothing here imports browser-use: it must be in place before browser-use is imported.
"""

import os
from collections.abc import Iterator
from contextlib import contextmanager

from capreplay_jsonlines.process import scratch_folder


@contextmanager
def browser_use_scratch(prefix: str) -> Iterator[str]:
    """The shared scratch folder, with browser-use's settings kept in it.

    browser-use makes temporary folders of its own (downloads, profile, the agent's files and screenshots; one
    already on import) and never removes them. Its config folder too, forced rather than defaulted: browser-use
    reads settings (even a default model) from there, and a user's would change the adapter's behaviour. Costs
    would need browser-use's price list, fetched from the network; capreplay counts tokens itself.
    """
    with scratch_folder(prefix) as scratch:
        os.environ["BROWSER_USE_CONFIG_DIR"] = os.path.join(scratch, "config")
        os.environ["BROWSER_USE_CALCULATE_COST"] = "false"
        yield scratch
