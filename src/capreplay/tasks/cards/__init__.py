"""Site cards (CAP's ⟨functions, execution items, perception items⟩ per site), made from a snapshot's pages.

:func:`make_cards` loads each page on the replay, asks a model once per page for the page's functions and
items (:mod:`.annotate`), reads the reply (:mod:`.parse`), keeps only the items whose selector chain names one
visible element of that page (:mod:`.validate`), and joins the pages of each site into its card
(:mod:`.build`). Everything dropped is kept in the cards file with the reason.
"""

from capreplay.tasks.cards.annotate import card_pages, make_cards, write_cards

__all__ = ["card_pages", "make_cards", "write_cards"]
