"""How a task, an approval card and a stream are shown: text, JSON and HTML."""
