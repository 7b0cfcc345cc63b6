"""What crosses the wire: error codes, the rules schema, message shapes and the command registry."""
