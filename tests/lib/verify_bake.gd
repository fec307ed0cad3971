# Run by `cargo xtask test` (xtask's bake self-check) in a fresh project beside the output of
# `cargo xtask bake`:
#   godot --headless --path P --script res://verify_bake.gd -- --baked res://baked.res --source res://x.glb
# Bakes the source again with VertexAnimation.bake() in this running game and requires every
# frame of every clip to decode identically, the clip tables to match, and the clips to move.
# Exits 0 when they do, 1 (with what differs) when not.
extends SceneTree


func _initialize() -> void:
	_main.call_deferred()


func _main() -> void:
	var args := OS.get_cmdline_user_args()
	var baked_path := args[args.find("--baked") + 1]
	var source_path := args[args.find("--source") + 1]
	var cli = ResourceLoader.load(baked_path, "", ResourceLoader.CACHE_MODE_IGNORE)
	if cli == null or not cli.is_baked():
		printerr("verify_bake: %s did not load as a baked VertexAnimation" % baked_path)
		quit(1)
		return
	var game = ClassDB.instantiate("VertexAnimation")
	game.source_scene = load(source_path)
	if game.bake() != OK:
		printerr("verify_bake: the in-game bake of %s failed" % source_path)
		quit(1)
		return
	var problems := PackedStringArray()
	if cli.get_clip_names() != game.get_clip_names():
		problems.append("clips differ: %s vs %s" % [cli.get_clip_names(), game.get_clip_names()])
	var frames := 0
	var moving := 0
	for c in mini(cli.get_clip_count(), game.get_clip_count()):
		var n: int = game.get_clip_frame_count(c)
		if cli.get_clip_frame_count(c) != n:
			problems.append("clip %d has %d frames, expected %d" % [c, cli.get_clip_frame_count(c), n])
			continue
		for f in n:
			frames += 1
			if cli.decode_frame(c, f) != game.decode_frame(c, f):
				problems.append("clip %d frame %d differs" % [c, f])
		if n > 1 and cli.decode_frame(c, 0) != cli.decode_frame(c, n / 2):
			moving += 1
	if moving == 0:
		problems.append("no baked clip moves")
	print("verify_bake: %d frames of %d clips compared, %d clips move, %d problems" % [frames, cli.get_clip_count(), moving, problems.size()])
	for p in problems.slice(0, 10):
		printerr("verify_bake: ", p)
	quit(0 if problems.is_empty() else 1)
