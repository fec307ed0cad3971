# What vat_crowd adds to the inspector: the clip picker for VertexAnimation.clips, and the Bake
# panel (stepped bake with progress, Cancel and undo, the size estimate and the last summary) at
# the top of the inspector of VertexAnimation and VertexAnimationBaker, in no group (always open),
# in place of their plain Bake button.
@tool
extends EditorInspectorPlugin

const BakePanel := preload("bake_panel.gd")
const ClipPicker := preload("clip_picker.gd")

var _runner: Node


func _init(runner: Node) -> void:
	_runner = runner


func _can_handle(object: Object) -> bool:
	return object.is_class("VertexAnimation") or object.is_class("VertexAnimationBaker")


func _parse_begin(object: Object) -> void:
	add_custom_control(BakePanel.new(object, _runner))


func _parse_property(object: Object, _type: Variant.Type, name: String, _hint_type: PropertyHint,
		_hint_string: String, _usage_flags: int, _wide: bool) -> bool:
	if name == "bake_button":
		# The Bake panel at the top replaces it.
		return true
	if name == "clips" and object.is_class("VertexAnimation"):
		var names: PackedStringArray = object.get_source_clip_names()
		if names.is_empty():
			# No source yet: the plain list editor.
			return false
		add_property_editor(name, ClipPicker.new(names), false, "Clips")
		return true
	return false
