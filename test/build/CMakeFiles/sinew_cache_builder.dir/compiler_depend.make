# Empty compiler generated dependencies file for sinew_cache_builder.
# This may be replaced when dependencies are built.
