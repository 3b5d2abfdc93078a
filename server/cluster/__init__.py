"""Several servers as one: leases on rooms, adoption of a dead node's rooms, the shared room
list and node list in Redis, the relay of pushes between nodes."""
