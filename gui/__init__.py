"""kbert's desktop app (PySide6).

The app sits on top of kbert's public API only: views, Qt item models and worker threads
here, no model math. See ../shared/DESIGN.md and issue "The desktop app".
"""
