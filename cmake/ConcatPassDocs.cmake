# Writes OUTPUT: one reference for the passes of every layer, each layer's
# generated reference (DIR/<layer>/FusePasses.md) under its own heading.
# (cmake -P script.)
set(layers Transforms Conversion Codegen)
set(titles "Graph transforms (fuse/Transforms)"
           "Conversions (fuse/Conversion)"
           "Code generation (fuse/Codegen)")
set(text "# Fuse passes\n\nGenerated from include/fuse/{Transforms,Conversion,Codegen}/Passes.td.\n")
foreach(layer title IN ZIP_LISTS layers titles)
  file(READ "${DIR}/${layer}/FusePasses.md" part)
  string(APPEND text "\n## ${title}\n\n${part}")
endforeach()
file(WRITE "${OUTPUT}" "${text}")
