"""Adapters of segmenter to other libraries, each importing its library inside the functions
that need it, behind a pyproject extra: spacy_tokenizer.py (the `spacy` extra, a spaCy
tokenizer by entry point), wwm.py (the `train` extra, whole-word-masking references). They
import the runtime; of the runtime only segmenter/hf.py reaches here, as a lazy re-export
of wwm.py under the name users of Hugging Face look for."""
