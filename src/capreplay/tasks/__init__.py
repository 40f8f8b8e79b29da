"""Task generation on a snapshot: site cards, workflows, multi-hop tasks, their proof on the frozen pages, review.

The stages follow CAP (site cards, functional affinity, proposals, instances) and GTA (retrieval over the
crawl, paired pages, filters, a minimal gold path), and end where neither paper can: every task is run by
the gold agent on the replay and judged before it is written (:mod:`capreplay.tasks.proof`).
"""
