"""A model folder made from another one by new weights: `segmenter refine` and `distill --ffn`.

The source folder's files are copied (its head profile with the runtime entry, word table,
vocabulary, card), the new weights replace its own (float16), the profile records how they
were made, the card gets a section, and model.onnx is exported again in the source's kind
(float, int8 or static int8 weights, the last calibrated on raw lines the caller read) when the
source had one: else engine="auto" would find none and run numpy, which is correct too, only slower.
"""
from __future__ import annotations

import json
import shutil
from pathlib import Path

from ..model.integrity import write_manifest
from ..model.onnx_engine import ONNX_FILE, exported_kind
from ..model.profile import PROFILE_FILE
from ..run.files import staged_folder
from ..words.table_files import standalone_table
from .model_card import append_card_section
from .onnx_export import export_onnx
from .onnx_static import CALIBRATION_LINES


def onnx_kind(folder: Path) -> str | None:
    """How folder/model.onnx stores its weights: "float", "int8" (dynamic), "static" (static
    int8), or None when there is none."""
    path = Path(folder) / ONNX_FILE
    return exported_kind(path) if path.is_file() else None


def write_derived_folder(source: Path, out: Path, model, key: str, record: dict, describe: str, card_section: str,
                         onnx: str | None, raw: list[str] = ()) -> None:
    """Write `out`: source's files, `model`'s weights (float16) and config, profile.extra[key] =
    record (an earlier record under the same key moves to f"{key}_earlier"), `describe` appended
    to the profile's source, `card_section` to the card; model.onnx exported as `onnx` says
    ("float", "int8", "static": calibrated on the first CALIBRATION_LINES of `raw`; None: none)."""
    from ..api import Segmenter
    from .selftrain import save_half

    with staged_folder(source, out, skip=(ONNX_FILE,)) as building:
        scratch = building / ".fp32"
        model.save_pretrained(scratch, safe_serialization=True)
        save_half(scratch / "model.safetensors", building / "model.safetensors")
        shutil.copy(scratch / "config.json", building / "config.json")  # distill --ffn changes its sizes
        for name in ("model.safetensors", "config.json"):
            (building / name).chmod(0o644)  # readable like the rest of the folder
        shutil.rmtree(scratch)
        profile_path = building / PROFILE_FILE
        data = json.loads(profile_path.read_text(encoding="utf-8"))
        extra = data.setdefault("extra", {})
        earlier = extra.get(f"{key}_earlier", []) + ([extra[key]] if key in extra else [])
        if earlier:
            extra[f"{key}_earlier"] = earlier
        extra[key] = record
        data["source"] = f"{data.get('source', '')}; {describe}"
        if "runtime" in data:  # a folder that reads another's word table (fast) gets its own copy:
            data["runtime"] = standalone_table(source, data["runtime"], building)  # `out` may lie anywhere
        profile_path.write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
        append_card_section(building, card_section)
        if onnx is not None:
            kind = {"float": False, "int8": "dynamic", "static": "static"}[onnx]
            calibration = list(raw[:CALIBRATION_LINES]) if onnx == "static" else None
            export_onnx(Segmenter(building, engine="torch"), building / ONNX_FILE, int8=kind, calibration=calibration,
                        calibration_source=f"the first {len(calibration or ())} lines {key} trained on")
        write_manifest(building)  # checksums.json, checked on load (integrity.py)

