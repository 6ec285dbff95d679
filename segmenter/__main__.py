from segmenter.cli import run_main

run_main()
