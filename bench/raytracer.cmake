# bench_raytracer: the ray tracer example serially, on std::thread and offloaded with cppless
# (scene captured per call, and pre-serialized). Needs the example's scene library.
if(TARGET raytracer_scene)
  add_executable(bench_raytracer ${CMAKE_CURRENT_LIST_DIR}/raytracer_bench.cpp)
  target_link_libraries(bench_raytracer PRIVATE $<LINK_LIBRARY:WHOLE_ARCHIVE,raytracer_scene> cppless_warnings)
  target_compile_definitions(bench_raytracer PRIVATE CPPLESS_SOURCE_DIR="${PROJECT_SOURCE_DIR}")
endif()
