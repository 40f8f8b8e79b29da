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

The stages take and return models and run no browser; :mod:`.files` reads and writes the files around them,
and proves the instances on the frozen pages (:func:`instantiate_batch`).
"""

from capreplay.tasks.workflows.files import instantiate_batch, write_proposals
from capreplay.tasks.workflows.instantiate import instantiate
from capreplay.tasks.workflows.propose import propose

__all__ = ["instantiate", "instantiate_batch", "propose", "write_proposals"]
