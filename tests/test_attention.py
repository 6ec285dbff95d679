"""The attention reader (attention.py) against the model's own `output_attentions`.

The reader's fast path runs the layers itself and computes only the needed heads' weights; the
fallback asks the model for every layer's weights. Both must give what the model itself reports,
on a padded batch, whichever attention kernel (SDPA or eager) the model was loaded with.
"""
import numpy as np
import pytest
import torch

from segmenter.model.attention import AttentionReader, bert_layout
from segmenter.model.reader import HeadReader
from segmenter.model.scores import boundary_scores
from segmenter.text.windows import collate

from conftest import tiny_bert, tiny_vocab

HEADS = [(2, 2), (0, 3), (2, 0)]  # two layers, not the first heads, not in layer order
WINDOWS = [np.arange(10, 31), np.arange(40, 47), np.arange(50, 52)]  # 21, 7 and 2 characters: padding


def reference(attention: str, ids: np.ndarray, mask: np.ndarray) -> tuple:
    """Every layer's weights as the model reports them (eager attention hands them out)."""
    model = tiny_bert(attention="eager")
    with torch.inference_mode():
        output = model(input_ids=torch.from_numpy(ids), attention_mask=torch.from_numpy(mask), output_attentions=True)
    return output.attentions


@pytest.fixture(scope="module")
def batch():
    return collate(WINDOWS, tiny_vocab())


@pytest.mark.parametrize("attention", ["sdpa", "eager"])
def test_fast_path_equals_output_attentions(attention, batch):
    ids, mask = batch
    model = tiny_bert(attention=attention)
    reader = AttentionReader(model, HEADS)
    assert reader.fast and bert_layout(model)
    with torch.inference_mode():
        got = reader.run(input_ids=torch.from_numpy(ids), attention_mask=torch.from_numpy(mask))
    expected = reference(attention, ids, mask)
    assert sorted(got) == [0, 2] and reader.heads_by_layer == {0: [3], 2: [0, 2]}
    for layer, heads in reader.heads_by_layer.items():
        assert got[layer].shape == (len(WINDOWS), len(heads), ids.shape[1], ids.shape[1])
        torch.testing.assert_close(got[layer], expected[layer][:, heads], rtol=1e-4, atol=1e-5)
    padding = ~torch.from_numpy(mask).bool()[:, None, None, :]  # key columns no row may look at
    for layer in got:
        assert float(got[layer].masked_select(padding.expand_as(got[layer])).max()) < 1e-6


@pytest.mark.parametrize("attention", ["sdpa", "eager"])
def test_fallback_equals_output_attentions_and_the_fast_path(attention, batch):
    """The fallback serves models loaded with eager attention (model.attention_implementation);
    the fast path, on either kernel, must agree with it."""
    ids, mask = batch
    slow = AttentionReader(tiny_bert(attention="eager"), HEADS)
    slow.fast = False  # as for a model without the BERT layout
    fast = AttentionReader(tiny_bert(attention=attention), HEADS)
    inputs = {"input_ids": torch.from_numpy(ids), "attention_mask": torch.from_numpy(mask)}
    with torch.inference_mode():
        got, quick = slow.run(**inputs), fast.run(**inputs)
    expected = reference("eager", ids, mask)
    for layer, heads in slow.heads_by_layer.items():
        torch.testing.assert_close(got[layer], expected[layer][:, heads], rtol=1e-5, atol=1e-6)
        torch.testing.assert_close(quick[layer], got[layer], rtol=1e-4, atol=1e-5)


def test_head_reader_scores_are_the_models_own(batch):
    """HeadReader (batching by padded length, profile order of heads) = boundary_scores of
    the model's own weights, window by window."""
    ids, mask = batch
    model = tiny_bert(attention="sdpa")
    heads = [(2, 2), (0, 3)]  # profile order differs from layer order
    scores = HeadReader(model, tiny_vocab(), heads, torch.device("cpu")).read(WINDOWS, batch_size=2)
    attentions = reference("eager", ids, mask)
    lengths = torch.tensor([len(w) for w in WINDOWS])
    expected = torch.cat([boundary_scores(attentions[layer][:, [head]], lengths) for layer, head in heads], dim=1)
    for row, window in enumerate(WINDOWS):
        assert scores[row].shape == (len(heads), len(window) - 1)
        np.testing.assert_allclose(scores[row], expected[row, :, : len(window) - 1].numpy(), rtol=1e-4, atol=1e-4)
