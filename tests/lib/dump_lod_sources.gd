# Writes the LOD chain's input of every test character as JSON, to try the engine-free LOD tools
# (vat_core::lod_mesh) outside Godot, with the debug build (`cargo xtask build`, or the one
# `cargo xtask test` made: cargo feature `dev`, which has dump_lod_input):
#   cargo xtask build
#   cargo xtask godot -- --headless --path tests --script res://lib/dump_lod_sources.gd -- --out DIR
# For the generated soldier (its Body mesh, as the tests bake it) and every .glb/.gltf in
# res://assets_local/, writes DIR/NAME.source.json (the LodSource) and DIR/NAME.poses.json (the
# first, middle and last frame of every clip), through VertexAnimation.dump_lod_input. Exits 1 if
# any character fails.
extends SceneTree


func _initialize() -> void:
	# Characters are posed only inside the running tree: start on the first frame.
	_main.call_deferred()


func _main() -> void:
	quit(_run(OS.get_cmdline_user_args()))


func _run(args: PackedStringArray) -> int:
	var i := args.find("--out")
	if i < 0 or i + 1 >= args.size():
		printerr("dump_lod_sources.gd: usage: -- --out DIR")
		return 1
	var out := args[i + 1]
	if not ClassDB.class_has_method("VertexAnimation", "dump_lod_input"):
		printerr("dump_lod_sources.gd: VertexAnimation.dump_lod_input is missing: it is in the debug"
			+ " build only (cargo feature `dev`); run `cargo xtask build` first")
		return 1
	DirAccess.make_dir_recursive_absolute(out)
	var cases := {"soldier": "res://generated/soldier.tscn"}
	for f in DirAccess.get_files_at("res://assets_local"):
		if f.get_extension().to_lower() in ["glb", "gltf"]:
			cases[f.get_basename()] = "res://assets_local/".path_join(f)
	var failed := 0
	for name in cases:
		var va := VertexAnimation.new()
		va.source_scene = load(cases[name])
		if name == "soldier":
			va.meshes = [NodePath("Skeleton/Body")] as Array[NodePath]
		# Called by name: the method exists only in dev builds, and a static call would not parse
		# in a release build.
		var err: int = va.call(&"dump_lod_input", out.path_join(name + ".source.json"),
			out.path_join(name + ".poses.json"))
		if err != OK:
			printerr("dump_lod_sources.gd: %s failed (error %d)" % [name, err])
			failed += 1
		else:
			print("dump_lod_sources.gd: %s: %d vertices, %d clips -> %s" % [name,
				va.vertex_count, va.get_clip_count(), out])
	return 1 if failed > 0 else 0
