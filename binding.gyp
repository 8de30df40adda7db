{
  "targets": [
    {
      "target_name": "shm_view",
      "sources": ["native/shm_view.c"],
      "cflags": ["-O2", "-Wall", "-Wextra"]
    }
  ]
}
