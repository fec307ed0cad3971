# Command-line baker:
#   godot --headless --path PROJECT --script res://addons/vat_crowd/bake.gd -- \
#       --source res://x.glb --out res://x.res [--fps N] [--clips a,b] [--meshes Path/A,Path/B] \
#       [--precision half|float] [--storage auto|bones|vertices] [--no-normals] [--no-lod]
#   godot --headless --path PROJECT --script res://addons/vat_crowd/bake.gd -- --all res://dir
# Prints a summary and exits 0, or prints what is wrong and exits 1.
extends SceneTree


func _initialize() -> void:
	# Godot animates and places nodes only inside the running tree, which the root window enters
	# after _initialize returns: bake from the first frame on.
	_main.call_deferred()


func _main() -> void:
	var code := _run(OS.get_cmdline_user_args())
	quit(code)


func _run(args: PackedStringArray) -> int:
	if not ClassDB.class_exists("VertexAnimation"):
		printerr("bake.gd: the vat_crowd extension is not loaded (run `cargo xtask build`?)")
		return 1
	var opts := {}
	var i := 0
	while i < args.size():
		var a := args[i]
		if a == "--no-normals":
			opts["no_normals"] = true
		elif a == "--no-lod":
			opts["no_lod"] = true
		elif a in ["--source", "--out", "--fps", "--clips", "--meshes", "--precision", "--storage", "--all"]:
			if i + 1 >= args.size():
				printerr("bake.gd: %s needs a value" % a)
				return 1
			opts[a.substr(2)] = args[i + 1]
			i += 1
		else:
			printerr("bake.gd: unknown argument '%s'" % a)
			return 1
		i += 1
	if opts.has("all"):
		return _bake_all(opts["all"])
	if not opts.has("source") or not opts.has("out"):
		printerr("bake.gd: usage: --source res://x.glb --out res://x.res [--fps N] [--clips a,b] [--meshes A,B] [--precision half|float] [--storage auto|bones|vertices] [--no-normals] [--no-lod] | --all res://dir")
		return 1
	var scene := load(opts["source"]) as PackedScene
	if scene == null:
		printerr("bake.gd: '%s' is not a scene Godot can load (imported?)" % opts["source"])
		return 1
	var va = ClassDB.instantiate("VertexAnimation")
	va.source_scene = scene
	if opts.has("fps"):
		if not opts["fps"].is_valid_float() or float(opts["fps"]) <= 0.0:
			printerr("bake.gd: --fps must be a positive number, got '%s'" % opts["fps"])
			return 1
		va.fps = float(opts["fps"])
	if opts.has("clips"):
		va.clips = PackedStringArray(opts["clips"].split(",", false))
	if opts.has("meshes"):
		var paths: Array[NodePath] = []
		for p in opts["meshes"].split(",", false):
			paths.append(NodePath(p))
		va.meshes = paths
	if opts.has("precision"):
		match opts["precision"]:
			"half": va.precision = 0
			"float": va.precision = 1
			_:
				printerr("bake.gd: --precision must be half or float, got '%s'" % opts["precision"])
				return 1
	if opts.has("storage"):
		match opts["storage"]:
			"vertices": va.storage = 0
			"bones": va.storage = 1
			"auto": va.storage = 2
			_:
				printerr("bake.gd: --storage must be auto, bones or vertices, got '%s'" % opts["storage"])
				return 1
	if opts.has("no_normals"):
		va.bake_normals = false
	if opts.has("no_lod"):
		va.lod_enabled = false
	return _bake_one(va, opts["out"])


func _bake_one(va, out: String) -> int:
	if va.bake() != OK:
		printerr("bake.gd: bake failed (see the error above)")
		return 1
	var err = va.save_to(out)
	if err != OK:
		printerr("bake.gd: could not save '%s' (error %d)" % [out, err])
		return 1
	print("bake.gd: ", va.get_bake_stats()["summary"], " -> ", out)
	return 0


func _bake_all(dir: String) -> int:
	var files := _resources_under(dir)
	var failed := 0
	var baked := 0
	for path in files:
		var res = ResourceLoader.load(path, "", ResourceLoader.CACHE_MODE_IGNORE)
		if res == null or not res.is_class("VertexAnimation"):
			continue
		if _bake_one(res, path) != 0:
			failed += 1
		else:
			baked += 1
	print("bake.gd: baked %d VertexAnimation(s) under %s, %d failed" % [baked, dir, failed])
	return 1 if failed > 0 else 0


func _resources_under(dir: String) -> PackedStringArray:
	var out := PackedStringArray()
	var d := DirAccess.open(dir)
	if d == null:
		printerr("bake.gd: cannot open folder '%s'" % dir)
		return out
	for f in d.get_files():
		if f.ends_with(".res") or f.ends_with(".tres"):
			out.append(dir.path_join(f))
	for sub in d.get_directories():
		out.append_array(_resources_under(dir.path_join(sub)))
	return out
