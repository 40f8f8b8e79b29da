"""Running capreplay's episodes and page sessions on a Ray cluster: connecting, shipping snapshots, the tasks."""
