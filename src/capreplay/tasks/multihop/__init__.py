"""GTA's multi-hop tasks on a snapshot: BM25 retrieval over the pages, seed and partner pairs, a model-written
question that needs both pages, filters for clarity, ambiguity and single-page answers, and a gold path
through the crawl graph. :func:`draft_multihop` runs it all.
"""

from capreplay.tasks.multihop.files import multihop_batch
from capreplay.tasks.multihop.generate import PROMPT_NAMES, MultihopDrafts, draft_multihop, tasks_from_pairs

__all__ = ["PROMPT_NAMES", "MultihopDrafts", "draft_multihop", "multihop_batch", "tasks_from_pairs"]
