## Builds vat_crowd's demo character in code: a low-poly soldier with a sword and
## a shield, rigged and animated, from parametric shapes only (no asset files).
##
## Scene layout (depth-first order of the meshes: Body, Shield, Sword):
##   Soldier (Node3D)
##     Skeleton (Skeleton3D, 19 bones, rest pose = arms hanging)
##       Body (MeshInstance3D, skinned, surfaces Armor / Skin / Leather, own Skin)
##       Shield (MeshInstance3D, skinned 100 % to ForeArm_L, own one-bind Skin)
##       SwordAttachment (BoneAttachment3D on Hand_R)
##         Sword (MeshInstance3D, rigid, offset and tilted in the hand)
##     AnimationPlayer (library "": idle, walk, run, attack, die)
##
## The Skins' bind poses are the inverses of the bind-time global poses, which
## differ from the rest pose (see soldier_rig.gd). soldier_builder.gd saves the
## result as a self-contained .tscn for the demo and the tests.
class_name SoldierFactory
extends RefCounted

const Rig := preload("res://demo/character/soldier_rig.gd")
const Body := preload("res://demo/character/soldier_body.gd")
const Equipment := preload("res://demo/character/soldier_equipment.gd")
const Clips := preload("res://demo/character/soldier_clips.gd")
const Look := preload("res://demo/character/soldier_look.gd")

const CLIP_NAMES := ["idle", "walk", "run", "attack", "die"]
## Where the sword's grip sits in the right hand's frame, and how it is tilted.
const SWORD_OFFSET := Vector3(0.0, -0.075, -0.004)
const SWORD_TILT_DEG := -55.0


## Returns the soldier. armor_texture is the Armor material's albedo; null uses
## an in-memory copy of team variation 0.
static func build(armor_texture: Texture2D = null) -> Node3D:
	if armor_texture == null:
		armor_texture = ImageTexture.create_from_image(Look.make_variation_image(0))
	var root := Node3D.new()
	root.name = "Soldier"
	var skeleton := Rig.make_skeleton()
	root.add_child(skeleton)

	var body := MeshInstance3D.new()
	body.name = "Body"
	var body_mesh := Body.build()
	body_mesh.surface_set_material(0, Look.armor_material(armor_texture))
	body_mesh.surface_set_material(1, Look.skin_material())
	body_mesh.surface_set_material(2, Look.leather_material())
	body.mesh = body_mesh
	body.skin = _body_skin()
	skeleton.add_child(body)
	body.skeleton = NodePath("..")

	var shield := MeshInstance3D.new()
	shield.name = "Shield"
	var shield_mesh := Equipment.shield_mesh()
	shield_mesh.surface_set_material(0, Look.shield_material())
	shield.mesh = shield_mesh
	shield.skin = _shield_skin()
	skeleton.add_child(shield)
	shield.skeleton = NodePath("..")

	var attachment := BoneAttachment3D.new()
	attachment.name = "SwordAttachment"
	skeleton.add_child(attachment)
	attachment.bone_name = "Hand_R"
	var sword := MeshInstance3D.new()
	sword.name = "Sword"
	var sword_mesh := Equipment.sword_mesh()
	sword_mesh.surface_set_material(0, Look.steel_material())
	sword.mesh = sword_mesh
	sword.transform = Transform3D(Basis(Vector3.RIGHT, deg_to_rad(SWORD_TILT_DEG)), SWORD_OFFSET)
	attachment.add_child(sword)

	var player := AnimationPlayer.new()
	player.name = "AnimationPlayer"
	root.add_child(player)
	player.add_animation_library("", Clips.build_library())

	_own(root, root)
	return root


## Forward speed (m/s) that keeps the feet planted while a clip plays: walk and
## run move the character; idle, attack and die stay in place (0).
static func ground_speed(clip: String) -> float:
	match clip:
		"walk":
			return Clips.ground_speed(Clips.WALK_GAIT)
		"run":
			return Clips.ground_speed(Clips.RUN_GAIT)
	return 0.0


## The body's Skin: one named bind per bone, in skeleton order, each the inverse
## of the bone's bind-time global transform.
static func _body_skin() -> Skin:
	var skin := Skin.new()
	skin.resource_name = "BodySkin"
	var g := Rig.bind_globals()
	for i in Rig.bone_count():
		skin.add_named_bind(Rig.bone_name(i), g[i].affine_inverse())
	return skin


## The shield's Skin: a single bind (index 0) on ForeArm_L, by bone index.
static func _shield_skin() -> Skin:
	var skin := Skin.new()
	skin.resource_name = "ShieldSkin"
	var i := Rig.bone_index("ForeArm_L")
	skin.add_bind(i, Rig.bind_globals()[i].affine_inverse())
	return skin


static func _own(node: Node, owner: Node) -> void:
	for child in node.get_children():
		child.owner = owner
		_own(child, owner)
