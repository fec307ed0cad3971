# Run by `cargo xtask test` (xtask's bake self-check) in the project `cargo xtask bake`'s output
# was verified in, after the source file was deleted:
#   godot --headless --path P --script res://verify_moved_bake.gd -- --baked res://baked.res
# A baked file keeps its source by path, never as a dependency: it must load, play and say
# that its source is missing. Exits 0 when it does, 1 (with what did not) when not.
extends SceneTree


func _initialize() -> void:
	_main.call_deferred()


func _main() -> void:
	var args := OS.get_cmdline_user_args()
	var baked_path := args[args.find("--baked") + 1]
	var problems := PackedStringArray()
	var deps := ResourceLoader.get_dependencies(baked_path)
	if not deps.is_empty():
		problems.append("it depends on %s" % [deps])
	var va = ResourceLoader.load(baked_path, "", ResourceLoader.CACHE_MODE_IGNORE)
	if va == null or not va.is_baked():
		printerr("verify_moved_bake: %s did not load as a baked VertexAnimation without its source" % baked_path)
		quit(1)
		return
	if va.source_scene != null:
		problems.append("source_scene is %s, though its file is gone" % va.source_scene)
	var warnings: PackedStringArray = va.get_bake_warnings()
	if warnings.size() != 1 or not warnings[0].begins_with("The source is missing"):
		problems.append("the warnings do not say the source is missing: %s" % [warnings])
	var crowd = ClassDB.instantiate("AnimatedMeshInstance")
	crowd.animation = va
	root.add_child(crowd)
	if crowd.add_instance(Transform3D.IDENTITY, va.get_clip_count() - 1) < 0:
		problems.append("a crowd cannot play it")
	crowd.submit()
	crowd.free()
	if problems.is_empty():
		print("verify_moved_bake: %s loads, plays and warns without its source (%s)" % [baked_path, warnings[0]])
		quit(0)
	else:
		printerr("verify_moved_bake: " + "; ".join(problems))
		quit(1)
