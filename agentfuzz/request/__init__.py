"""What a request may hold: the surface's dimensions, id shapes, relations, client id policies,
and the fuzz profiles that narrow them."""
