"""Built-in output formats. Each subpackage registers itself through the ``piconv``
entry-point group, exactly like a third-party plugin; the core imports none of them."""
