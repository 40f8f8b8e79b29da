"""Review by a person: a Markdown sheet per batch, filled by hand, merged into a tasks file, compared between two.

- :func:`write_sheet` (``sheet``): the sheet of a batch folder, every proven task with what a reviewer needs
  and a decision block to tick;
- :func:`read_sheet` / :func:`parse_sheet` (``parse``): the sheet read back strictly, every problem one
  InputError naming the sheet and the line;
- :func:`accept_sheet` (``accept``): the accepted tasks merged into a tasks file, the rejections logged beside it;
- :func:`sheet_agreement` (``agreement``): two reviewers' sheets of one batch, with Cohen's kappa.
"""

from capreplay.tasks.review.accept import AcceptSummary, accept_sheet, rejection_log
from capreplay.tasks.review.agreement import SheetAgreement, agreement_of, sheet_agreement
from capreplay.tasks.review.batch_folder import ReviewBatch, read_batch
from capreplay.tasks.review.parse import ReviewedSheet, Sheet, SheetTask, parse_sheet, read_sheet
from capreplay.tasks.review.sheet import SHEET_NAME, render_sheet, write_sheet

__all__ = [
    "SHEET_NAME",
    "AcceptSummary",
    "ReviewBatch",
    "ReviewedSheet",
    "Sheet",
    "SheetAgreement",
    "SheetTask",
    "accept_sheet",
    "agreement_of",
    "parse_sheet",
    "read_batch",
    "read_sheet",
    "rejection_log",
    "render_sheet",
    "sheet_agreement",
    "write_sheet",
]
