"""Files: safe writing, documents, exports."""
