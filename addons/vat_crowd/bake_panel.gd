# The Bake panel at the top of a VertexAnimation's or a VertexAnimationBaker's inspector (always
# open, in no group): the Bake button, the estimated texture size (before baking), progress with
# Cancel while baking (the bake itself runs in the plugin's bake runner), the last bake's summary,
# and what is wrong (no source, a source that cannot bake, no bake yet, a bake older than its
# source).
@tool
extends VBoxContainer

## Meta key that marks this panel in the inspector (tests find it by it).
const META := &"vat_crowd_bake_panel"

## The VertexAnimation or VertexAnimationBaker this panel bakes.
var target: Object
## The plugin's bake runner.
var runner: Node

var bake_button := Button.new()
var cancel_button := Button.new()
var progress_bar := ProgressBar.new()
var warning_label := Label.new()
var estimate_label := Label.new()
var summary_label := Label.new()


func _init(p_target: Object, p_runner: Node) -> void:
	target = p_target
	runner = p_runner
	set_meta(META, true)
	var row := HBoxContainer.new()
	bake_button.text = "Bake"
	bake_button.tooltip_text = "Bake in steps; the editor stays responsive. The finished bake can be undone."
	bake_button.size_flags_horizontal = Control.SIZE_EXPAND_FILL
	bake_button.pressed.connect(_on_bake)
	row.add_child(bake_button)
	cancel_button.text = "Cancel"
	cancel_button.tooltip_text = "Stop the bake; the resource stays exactly as it was."
	cancel_button.pressed.connect(_on_cancel)
	row.add_child(cancel_button)
	add_child(row)
	progress_bar.show_percentage = true
	add_child(progress_bar)
	for label: Label in [warning_label, estimate_label, summary_label]:
		label.autowrap_mode = TextServer.AUTOWRAP_WORD_SMART
		label.custom_minimum_size.x = 120
		add_child(label)
	summary_label.add_theme_color_override(&"font_color", Color(0.7, 0.7, 0.7))
	warning_label.add_theme_color_override(&"font_color", Color(1.0, 0.8, 0.3))


func _enter_tree() -> void:
	runner.progress.connect(_on_progress)
	runner.ended.connect(_on_ended)
	if Engine.is_editor_hint():
		EditorInterface.get_inspector().property_edited.connect(_on_property_edited)
	refresh()


func _exit_tree() -> void:
	# The plugin (and its runner) may go first, when it is disabled.
	if is_instance_valid(runner) and runner.progress.is_connected(_on_progress):
		runner.progress.disconnect(_on_progress)
		runner.ended.disconnect(_on_ended)
	if Engine.is_editor_hint() and EditorInterface.get_inspector().property_edited.is_connected(_on_property_edited):
		EditorInterface.get_inspector().property_edited.disconnect(_on_property_edited)


## Shows the runner's state, the estimate and the last bake's summary.
func refresh() -> void:
	var mine: bool = runner.is_baking() and runner.target == target
	bake_button.disabled = runner.is_baking()
	cancel_button.disabled = not mine
	progress_bar.visible = mine
	if mine:
		var p: Vector2i = runner.get_progress()
		_show_progress(p.x, p.y)
	_show_warnings()
	summary_label.text = _summary_text()


func _on_bake() -> void:
	runner.bake(target)


func _on_cancel() -> void:
	runner.cancel()


func _on_progress(object: Object, done: int, total: int) -> void:
	if object == target:
		if not progress_bar.visible:
			refresh()
		_show_progress(done, total)


func _on_ended(_object: Object, _error: int, _message: String) -> void:
	refresh()


func _on_property_edited(_property: String) -> void:
	if not runner.is_baking():
		_show_warnings()


## The resource's warnings (VertexAnimation.get_bake_warnings), else the estimate.
func _show_warnings() -> void:
	var warnings := PackedStringArray()
	if target.is_class("VertexAnimation"):
		warnings = target.get_bake_warnings()
	warning_label.text = "\n".join(warnings)
	warning_label.visible = not warnings.is_empty()
	estimate_label.text = _estimate_text()


func _show_progress(done: int, total: int) -> void:
	progress_bar.max_value = maxi(total, 1)
	progress_bar.value = done


func _estimate_text() -> String:
	if not target.is_class("VertexAnimation"):
		return ""
	# Without a source, or with one that cannot bake, the warnings above say why.
	if target.source_scene == null:
		return ""
	var e: Dictionary = target.estimate_bake()
	if e.has("error"):
		return ""
	var text := "Estimate: %d vertices x %d frames (%d clips), textures %s" % [
		e["vertices"], e["frames"], e["clips"], String.humanize_size(e["bytes"])]
	if target.lod_enabled:
		text += " or less (LOD keeps only the columns its levels use)"
	return text


func _summary_text() -> String:
	if target.is_class("VertexAnimationBaker"):
		var baked := 0
		for t in target.targets:
			if t != null and t.is_baked():
				baked += 1
		return "%d of %d targets baked" % [baked, target.targets.size()]
	if not target.is_baked():
		return "Not baked yet."
	var s: Dictionary = target.get_bake_stats()
	if s.is_empty():
		# Loaded from a file: the counts are stored, the timings are not.
		var bytes := 0
		for t: ImageTexture in [target.position_texture, target.normal_texture]:
			if t != null:
				bytes += t.get_image().get_data().size()
		return "Last bake: %d vertices, %d frames, %d clips, textures %dx%d, %s, %d LOD levels" % [
			target.vertex_count, target.frame_count, target.get_clip_count(),
			target.position_texture.get_width(), target.position_texture.get_height(),
			String.humanize_size(bytes), target.get_lod_count()]
	var text := "Last bake: %d vertices, %d frames, %d clips, textures %dx%d, %s, %.0f ms" % [
		s["vertices"], s["frames"], s["clips"], s["texture_width"], s["texture_height"],
		String.humanize_size(s["bytes"]), s["total_ms"]]
	var lods: Array = s.get("lods", [])
	if not lods.is_empty():
		var levels := PackedStringArray()
		for l: Dictionary in lods:
			levels.append("LOD%d %d tris" % [l["level"], l["triangles"]])
		text += "\nLOD: %s; textures %s -> %s (%.0f ms)" % [", ".join(levels),
			String.humanize_size(s["vat_bytes_before"]), String.humanize_size(s["vat_bytes_after"]),
			s["lod_ms"]]
	for note: String in s.get("lod_notes", PackedStringArray()):
		text += "\n" + note
	return text
