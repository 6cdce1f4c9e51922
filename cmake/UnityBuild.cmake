# sinew_unity_build(TARGET): TARGET's sources compiled in batches of eight, each batch one
# translation unit, where SINEW_UNITY_BUILD is on: the headers a batch's sources share are parsed
# once for all of them (docs/decisions/186). Off: one translation unit per source.
function(sinew_unity_build target)
  if(SINEW_UNITY_BUILD)
    set_target_properties(${target} PROPERTIES UNITY_BUILD ON UNITY_BUILD_BATCH_SIZE 8)
  endif()
endfunction()
