"""Hugging Face pretraining helpers, re-exported lazily: `from segmenter.hf import chinese_ref`.

The code lives in segmenter/integrations/wwm.py; importing this module imports nothing else
(no transformers, no model), a call does.
"""
from __future__ import annotations

__all__ = ["chinese_ref", "iter_chinese_ref", "whole_word_offsets"]


def chinese_ref(*args, **kwargs) -> list[list[int]]:
    """Whole-word-masking references for run_mlm_wwm.py: segmenter.integrations.wwm.chinese_ref."""
    from .integrations.wwm import chinese_ref as implementation

    return implementation(*args, **kwargs)


def iter_chinese_ref(*args, **kwargs):
    """chinese_ref streamed a batch at a time: segmenter.integrations.wwm.iter_chinese_ref."""
    from .integrations.wwm import iter_chinese_ref as implementation

    return implementation(*args, **kwargs)


def whole_word_offsets(*args, **kwargs) -> list[tuple[int, int]]:
    """A reference as transformers 5's whole-word offset_mapping: segmenter.integrations.wwm.whole_word_offsets."""
    from .integrations.wwm import whole_word_offsets as implementation

    return implementation(*args, **kwargs)
