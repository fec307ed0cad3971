# The inspector's editor of VertexAnimation.clips: one checkbox per clip of the source scene's
# AnimationPlayer, in its order. Every box ticked stores an empty list (every clip, as the
# resource reads it); at least one clip stays ticked.
@tool
extends EditorProperty

## The source's clips, in order (from VertexAnimation.get_source_clip_names()).
var clip_names: PackedStringArray
var boxes: Array[CheckBox] = []
var _note := Label.new()
var _updating := false


func _init(names: PackedStringArray) -> void:
	clip_names = names
	var list := VBoxContainer.new()
	_note.add_theme_color_override(&"font_color", Color(0.7, 0.7, 0.7))
	list.add_child(_note)
	for n in names:
		var box := CheckBox.new()
		box.text = n
		box.toggled.connect(_on_toggled.bind(box))
		boxes.append(box)
		list.add_child(box)
	add_child(list)
	set_bottom_editor(list)


func _update_property() -> void:
	var clips: PackedStringArray = get_edited_object()[get_edited_property()]
	_updating = true
	for box in boxes:
		box.button_pressed = clips.is_empty() or clips.has(box.text)
	_updating = false
	var missing := PackedStringArray()
	for c in clips:
		if not clip_names.has(c):
			missing.append(c)
	if clips.is_empty():
		_note.text = "Every clip (%d)" % clip_names.size()
	else:
		_note.text = "%d of %d clips" % [clips.size() - missing.size(), clip_names.size()]
	if not missing.is_empty():
		_note.text += "; not in the source: " + ", ".join(missing)


func _on_toggled(on: bool, box: CheckBox) -> void:
	if _updating:
		return
	var picked := PackedStringArray()
	for b in boxes:
		if b.button_pressed:
			picked.append(b.text)
	if picked.is_empty():
		# An empty list means every clip: keep the last one ticked instead.
		_updating = true
		box.button_pressed = true
		_updating = false
		return
	if picked.size() == clip_names.size():
		picked = PackedStringArray()
	emit_changed(get_edited_property(), picked)
