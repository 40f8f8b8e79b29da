"""CAP's cross-site workflows on a snapshot: affinities, proposals, their review, and instances as tasks.

From a cards file (``tasks cards``):

1. :mod:`.affinity`: how naturally information flows between each pair of sites, asked once per pair;
   low pairs are never combined;
2. :mod:`.propose`: proposals ⟨scenario, flow pattern, DAG of steps over the sites, planned outputs⟩ for
   each group of related sites, written to ``proposals.json`` by :func:`propose`;
3. :mod:`.check`: each proposal reviewed against CAP's two criteria by a model, and by a person who edits
   ``proposals.json`` (how is said there);
4. :mod:`.instantiate`: each proposal no check rejected made a :class:`~capreplay.models.workflow.WorkflowTask`
   with covered points from the cards, expected values, a gold path and a rubric (:func:`instantiate`).

The tasks then go to the proof on the frozen pages; nothing here runs a browser.
"""

from capreplay.tasks.workflows.instantiate import instantiate
from capreplay.tasks.workflows.propose import propose

__all__ = ["instantiate", "propose"]
