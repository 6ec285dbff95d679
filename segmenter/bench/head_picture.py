"""A picture of the heads for one sentence: what the seed article showed as a GIF.

For each selected head, its attention matrix over `[CLS] c1 … cn [SEP]` (rows: the character
that attends; columns: where it looks), the chosen boundaries marked by horizontal lines between
the rows of the characters they separate, and
one strip at the bottom with the combined boundary score per junction. Characters label the
axes, so a CJK font is needed: matplotlib's default (DejaVu) has no Chinese glyphs. The first
installed font that covers the text is used: the Noto Sans CJK of the `plot` extra
(`pip install "segmenter-heads[plot]"` brings the `noto-cjk-sans-jp-regular` wheel, SIL OFL), else a
system font (Noto/Source Han, WenQuanYi, SimHei, PingFang, …), or `font=PATH` names one.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import torch

from ..model.attention import AttentionReader
from ..text.windows import collate

CJK_FONT_HINTS = ("Noto Sans CJK", "Noto Serif CJK", "Source Han", "WenQuanYi", "WQY", "SimHei", "Microsoft YaHei",
                  "PingFang", "Heiti", "AR PL", "Droid Sans Fallback", "Noto Sans SC", "Sarasa")


def find_cjk_font(text: str, font: str | None = None):
    """A matplotlib FontProperties able to draw `text`, or None when no installed font can."""
    from matplotlib import font_manager

    if font:
        if not Path(font).is_file():
            raise FileNotFoundError(f"font file {font} does not exist")
        return font_manager.FontProperties(fname=font)
    from matplotlib.ft2font import FT2Font

    candidates = []
    try:
        import noto_cjk_sans_jp_regular

        candidates.append(str(noto_cjk_sans_jp_regular.FONT_PATH))
    except ImportError:
        pass
    system = sorted(font_manager.fontManager.ttflist,
                    key=lambda f: not any(h.lower() in f.name.lower() for h in CJK_FONT_HINTS))
    candidates += [entry.fname for entry in system]
    sample = {ord(ch) for ch in text if not ch.isspace()}
    for fname in candidates:
        try:
            charmap = FT2Font(fname).get_charmap()
        except Exception:  # unreadable font files are simply skipped
            continue
        if sample <= set(charmap):
            return font_manager.FontProperties(fname=fname)
    return None


def draw_heads(segmenter, text: str, out: str | Path, font: str | None = None) -> Path:
    """Draw the selected heads of `segmenter` on `text` (Han characters) into a PNG."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    chars = "".join(ch for ch in text if not ch.isspace())
    if len(chars) < 2 or len(chars) > segmenter.window:
        raise ValueError(f"--show needs 2 to {segmenter.window} non-space characters, got {len(chars)}")
    properties = find_cjk_font(chars, font)
    if properties is None:
        raise RuntimeError(
            "no installed font has these characters; install one (e.g. `apt install fonts-noto-cjk` "
            "or fonts-wqy-microhei) or pass --font PATH"
        )
    heads = segmenter.profile.heads[:6]
    reader = AttentionReader(segmenter.model, heads)
    ids, mask = collate([segmenter.vocab.encode(chars)], segmenter.vocab, pad_multiple=1)  # one window, no padding
    with torch.inference_mode():
        attentions = reader.run(
            input_ids=torch.from_numpy(ids).to(segmenter.device),
            attention_mask=torch.from_numpy(mask).to(segmenter.device)
        )
    words = segmenter.segment(chars)
    cuts = np.cumsum([len(w) for w in words])[:-1]  # boundaries after these many characters
    plan = segmenter.score_texts([chars], show_progress=False)[0]
    combined = segmenter.profile.combine(plan.scores) if len(plan.junctions) else np.zeros(0)
    labels = ["[CLS]", *chars, "[SEP]"]
    figure, axes = plt.subplots(1, len(heads) + 1, figsize=(4.2 * (len(heads) + 1), 4.6))
    for axis, (layer, head) in zip(axes, heads):
        matrix = attentions[layer][0, reader.heads_by_layer[layer].index(head)].float().cpu().numpy()
        axis.imshow(matrix, cmap="Blues", vmin=0, vmax=1)
        axis.set_title(f"layer {layer}, head {head}")
        axis.set_xticks(range(len(labels)), labels, fontproperties=properties, fontsize=8, rotation=90)
        axis.set_yticks(range(len(labels)), labels, fontproperties=properties, fontsize=8)
        for cut in cuts:  # a cut after character `cut` lies between tokens cut and cut + 1
            axis.axhline(cut + 0.5, color="crimson", linewidth=0.8)
    strip = axes[-1]
    positions = np.arange(len(combined))
    strip.bar(positions, combined,
              color=["crimson" if c > segmenter.profile.threshold() else "steelblue" for c in combined])
    strip.axhline(segmenter.profile.threshold(), color="black", linewidth=0.8)
    junction_chars = plan.positions[plan.junctions]
    strip.set_xticks(positions, [f"{chars[q]}|{chars[q + 1]}" for q in junction_chars], fontproperties=properties,
                     fontsize=7, rotation=90)
    strip.set_title("combined score (red: cut)")
    figure.suptitle(" / ".join(words), fontproperties=properties)
    figure.tight_layout()
    out = Path(out)
    figure.savefig(out, dpi=120)
    plt.close(figure)
    return out
