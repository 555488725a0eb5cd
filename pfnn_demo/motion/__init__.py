"""Motion data: reading and writing BVH, and turning clips into world-space poses."""
