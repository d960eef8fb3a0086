"""RoBERTa and XLM-RoBERTa: BERT's block (bert.py), positions starting after the padding row.

Tokenizer: BPE (RoBERTa) or Unigram with ▁ (XLM-R); <s> … </s> from tokenizer.json's post-processor.
Weights: BertModel's names under ``roberta.``; position i reads row pad_token_id + 1 + i.
"""
from __future__ import annotations

from . import bert

NAME, TITLE, KIND, ORDER = "roberta", "RoBERTa / XLM-R", "encoder", 20
MODEL_TYPES = ("roberta", "xlm-roberta")
GGUF_ARCHITECTURES = ()
TOKENIZER = "BPE or Unigram; <s> … </s> from tokenizer.json's post-processor"
sizes, table, shapes = bert.sizes, bert.table, bert.shapes


def config(info):
    pad = info.config.get("pad_token_id", 1)
    offset = (pad if isinstance(pad, int) and not isinstance(pad, bool) and 0 <= pad < info.max_positions - 1
              else 1) + 1
    return bert.config(info, position_offset=offset)
