"""The schemas several rooms exchange, and nothing else: the snapshot's manifest and the traffic it records after
the headers (``manifest``, ``live_traffic``), the capture plan, the two tasks files with their rubric trees and page
geometry (``task``, ``workflow``, ``rubric``, ``geometry``) and the episode record an agent run writes and the judge
reads (``episode``). A room's own schemas live in the room: the generator's in :mod:`capreplay.tasks.generation`,
the verdict in :mod:`capreplay.judge.verdict`, the study's run records in :mod:`capreplay.study.records`, the agent
protocol in :mod:`capreplay.agents.protocol`, a registration in :mod:`capreplay.runs.registration_file`."""
