"""Planning: validate a manifest and freeze it into a Plan; estimate what it will send and cost."""
