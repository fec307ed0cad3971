# A SceneTree script that bakes from _initialize, as a user's tool script might (run by
# tests/unit/test_bake_entry_points.gd):
#   godot --headless --path tests -s res://lib/bake_in_initialize.gd -- SCENE
# Before the tree runs, Godot neither animates nor places nodes: bake() must refuse and leave the
# resource unbaked. From the first frame on it must bake, with motion. Prints one line per step
# and exits 0 only when both behave.
extends SceneTree


func _initialize() -> void:
	var scene: String = OS.get_cmdline_user_args()[0]
	var va = ClassDB.instantiate("VertexAnimation")
	va.source_scene = load(scene)
	var early: int = va.bake()
	print("initialize: bake() -> %s, baked %s" % [error_string(early), va.is_baked()])
	_later.call_deferred(va, early == FAILED and not va.is_baked())


func _later(va, refused: bool) -> void:
	var late: int = va.bake()
	var moves := false
	for c in va.get_clip_count() if late == OK else 0:
		moves = moves or va.decode_frame(c, 0) != va.decode_frame(c, va.get_clip_frame_count(c) / 2)
	print("deferred: bake() -> %s, moves %s" % [error_string(late), moves])
	quit(0 if refused and moves else 1)
