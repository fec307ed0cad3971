## Generates the demo soldier and saves it as a self-contained scene.
##
## godot --headless --path godot_project -s res://demo/character/soldier_builder.gd -- [--out PATH]...
##
## Without --out it writes res://demo/character/generated/soldier.tscn and, when
## the folder <godot_project>/../tests exists, <that>/generated/soldier.tscn.
## Next to each scene it writes variation_0.tres .. variation_3.tres (the team
## colour textures); the scene's Armor material uses variation_0.tres, referenced
## by a path relative to the scene, so the folder loads from any project.
## The scene holds no script. Every file is saved to a temporary name, then
## renamed. Prints a one-line summary and exits 0, or prints the error and exits 1.
extends SceneTree

const Factory := preload("res://demo/character/soldier_factory.gd")
const Look := preload("res://demo/character/soldier_look.gd")

const DEFAULT_OUT := "res://demo/character/generated/soldier.tscn"


func _initialize() -> void:
	var err := _run(OS.get_cmdline_user_args())
	if err != "":
		printerr("soldier_builder: error: " + err)
		quit(1)
	else:
		quit(0)


func _run(args: PackedStringArray) -> String:
	var outs := PackedStringArray()
	var i := 0
	while i < args.size():
		if args[i] == "--out" and i + 1 < args.size():
			outs.append(args[i + 1])
			i += 2
		elif args[i] == "--help" or args[i] == "-h":
			print("usage: godot --headless --path PROJECT -s res://demo/character/soldier_builder.gd -- [--out PATH.tscn]...")
			return ""
		else:
			return "unknown argument '%s' (usage: -- [--out PATH.tscn]...)" % args[i]
	if outs.is_empty():
		outs.append(DEFAULT_OUT)
		var tests := ProjectSettings.globalize_path("res://").path_join("../tests").simplify_path()
		if DirAccess.dir_exists_absolute(tests):
			outs.append(tests.path_join("generated/soldier.tscn"))
	var summary := ""
	for out in outs:
		if not out.ends_with(".tscn"):
			return "output '%s' must end in .tscn" % out
		var result := _write(out)
		if result.has("error"):
			return result["error"]
		summary = result["summary"]
	print("soldier_builder: wrote %s | %s" % [", ".join(outs), summary])
	return ""


## Writes the textures and the scene for one output path.
func _write(out: String) -> Dictionary:
	var dir := out.get_base_dir()
	var abs_dir := ProjectSettings.globalize_path(dir)
	var err := DirAccess.make_dir_recursive_absolute(abs_dir)
	if err != OK:
		return {"error": "cannot create folder '%s': %s" % [abs_dir, error_string(err)]}
	var textures := Look.make_variations()
	for t in textures.size():
		var path := dir.path_join("variation_%d.tres" % t)
		var e := _save_atomic(textures[t], path)
		if e != "":
			return {"error": e}
		# The scene refers to its textures by a path relative to itself, so the
		# folder loads from any project (the demo's, the tests').
		textures[t].take_over_path(path.get_file())
	var soldier := Factory.build(textures[0])
	var problem := _check(soldier)
	if problem != "":
		soldier.free()
		return {"error": "generated soldier is invalid: " + problem}
	var scene := PackedScene.new()
	err = scene.pack(soldier)
	var summary := _summary(soldier)
	soldier.free()
	if err != OK:
		return {"error": "cannot pack the soldier scene: " + error_string(err)}
	var e := _save_atomic(scene, out)
	if e != "":
		return {"error": e}
	return {"summary": summary}


## Saves to PATH.tmp.<ext>, then renames over PATH, so a reader never sees a
## partly written file and a failed save leaves the old file untouched.
func _save_atomic(res: Resource, path: String) -> String:
	var tmp := path + ".tmp." + path.get_extension()
	var err := ResourceSaver.save(res, tmp)
	if err != OK:
		DirAccess.remove_absolute(ProjectSettings.globalize_path(tmp))
		return "cannot save '%s': %s" % [tmp, error_string(err)]
	err = DirAccess.rename_absolute(ProjectSettings.globalize_path(tmp), ProjectSettings.globalize_path(path))
	if err != OK:
		DirAccess.remove_absolute(ProjectSettings.globalize_path(tmp))
		return "cannot rename '%s' to '%s': %s" % [tmp, path, error_string(err)]
	return ""


## Checks the invariants the tests rely on; returns "" or what is wrong.
func _check(soldier: Node3D) -> String:
	var skeleton := soldier.get_node("Skeleton") as Skeleton3D
	if skeleton.get_bone_count() < 17:
		return "only %d bones" % skeleton.get_bone_count()
	for mi_name in ["Body", "Shield"]:
		var mi := skeleton.get_node(mi_name) as MeshInstance3D
		var binds: int = mi.skin.get_bind_count()
		for s in mi.mesh.get_surface_count():
			var arr := mi.mesh.surface_get_arrays(s)
			var bones: PackedInt32Array = arr[Mesh.ARRAY_BONES]
			var weights: PackedFloat32Array = arr[Mesh.ARRAY_WEIGHTS]
			var n: int = (arr[Mesh.ARRAY_VERTEX] as PackedVector3Array).size()
			if bones.size() != 4 * n or weights.size() != 4 * n:
				return "%s surface %d: expected 4 bones and weights per vertex" % [mi_name, s]
			for v in n:
				var total := 0.0
				for k in 4:
					total += weights[4 * v + k]
					if bones[4 * v + k] >= binds:
						return "%s surface %d vertex %d: bind index out of range" % [mi_name, s, v]
				if absf(total - 1.0) > 1e-5:
					return "%s surface %d vertex %d: weights sum to %f" % [mi_name, s, v, total]
	return ""


func _summary(soldier: Node3D) -> String:
	var skeleton := soldier.get_node("Skeleton") as Skeleton3D
	var parts := PackedStringArray()
	parts.append("bones %d" % skeleton.get_bone_count())
	for path in ["Skeleton/Body", "Skeleton/Shield", "Skeleton/SwordAttachment/Sword"]:
		var mesh := (soldier.get_node(path) as MeshInstance3D).mesh as ArrayMesh
		var counts := PackedStringArray()
		var total := 0
		for s in mesh.get_surface_count():
			var n := mesh.surface_get_array_len(s)
			total += n
			counts.append("%s %d" % [mesh.surface_get_name(s), n])
		parts.append("%s %d verts (%s)" % [path.get_file(), total, ", ".join(counts)])
	var player := soldier.get_node("AnimationPlayer") as AnimationPlayer
	var clips := PackedStringArray()
	for clip in player.get_animation_list():
		var anim := player.get_animation(clip)
		clips.append("%s %.2fs%s" % [clip, anim.length, " loop" if anim.loop_mode != Animation.LOOP_NONE else ""])
	parts.append("clips: " + ", ".join(clips))
	return " | ".join(parts)
