"""Moved: the Ray Data adapter is `segmenter.scale.ray` (`from segmenter.scale.ray import SegmentBatch`).

This name stays only to say so: importing it raises ImportError with the new path. It imports
nothing, so it never reaches Ray, and `import ray` elsewhere (absolute) never finds this file.
"""

raise ImportError(
    "segmenter.ray has moved: use `from segmenter.scale.ray import SegmentBatch` "
    '(Ray Data: pip install "segmenter-heads[ray]")'
)
