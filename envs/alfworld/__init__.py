"""ALFWorld on the real ALFWorld/TextWorld engine, with bundled project-authored games."""
