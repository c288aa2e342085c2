"""Reading JSONL samples and rendering them through user templates."""
