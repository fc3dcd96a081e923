(define (problem plan_trial_E902_de00)
(:domain alfred)
(:objects
  agent1 - agent
  AppleType - otype
  BowlType - otype
  BreadType - otype
  ButterKnifeType - otype
  CupType - otype
  EggType - otype
  KettleType - otype
  KnifeType - otype
  LettuceType - otype
  MugType - otype
  PlateType - otype
  PotType - otype
  PotatoType - otype
  SoapBottleType - otype
  SpatulaType - otype
  TomatoType - otype
  VaseType - otype
  WineBottleType - otype
  CabinetType - rtype
  CounterTopType - rtype
  DrawerType - rtype
  FridgeType - rtype
  GarbageCanType - rtype
  MicrowaveType - rtype
  ShelfType - rtype
  SinkBasinType - rtype
  StoveBurnerType - rtype
  CounterTop_bar_1 - receptacle
  CounterTop_bar_2 - receptacle
  CounterTop_bar_3 - receptacle
  Cabinet_bar_1 - receptacle
  Cabinet_bar_2 - receptacle
  Cabinet_bar_3 - receptacle
  Cabinet_bar_4 - receptacle
  Drawer_bar_1 - receptacle
  Drawer_bar_2 - receptacle
  Drawer_bar_3 - receptacle
  Fridge_bar_1 - receptacle
  Microwave_bar_1 - receptacle
  Sink_bar_1_bar_SinkBasin - receptacle
  StoveBurner_bar_1 - receptacle
  Shelf_bar_1 - receptacle
  Shelf_bar_2 - receptacle
  GarbageCan_bar_1 - receptacle
  Apple_bar_1 - object
  Bowl_bar_1 - object
  Bread_bar_1 - object
  ButterKnife_bar_1 - object
  Cup_bar_1 - object
  Egg_bar_1 - object
  Kettle_bar_1 - object
  Lettuce_bar_1 - object
  Mug_bar_1 - object
  Mug_bar_2 - object
  Plate_bar_1 - object
  Pot_bar_1 - object
  Potato_bar_1 - object
  SoapBottle_bar_1 - object
  Spatula_bar_1 - object
  Tomato_bar_1 - object
  Tomato_bar_2 - object
  Vase_bar_1 - object
  WineBottle_bar_1 - object
  loc_bar_0 - location
  loc_bar_1 - location
  loc_bar_2 - location
  loc_bar_3 - location
  loc_bar_4 - location
  loc_bar_5 - location
  loc_bar_6 - location
  loc_bar_7 - location
  loc_bar_8 - location
  loc_bar_9 - location
  loc_bar_10 - location
  loc_bar_11 - location
  loc_bar_12 - location
  loc_bar_13 - location
  loc_bar_14 - location
  loc_bar_15 - location
  loc_bar_16 - location
  loc_bar_17 - location
)
(:init
  (atLocation agent1 loc_bar_0)
  (receptacleType CounterTop_bar_1 CounterTopType)
  (receptacleAtLocation CounterTop_bar_1 loc_bar_1)
  (receptacleType CounterTop_bar_2 CounterTopType)
  (receptacleAtLocation CounterTop_bar_2 loc_bar_2)
  (receptacleType CounterTop_bar_3 CounterTopType)
  (receptacleAtLocation CounterTop_bar_3 loc_bar_3)
  (receptacleType Cabinet_bar_1 CabinetType)
  (receptacleAtLocation Cabinet_bar_1 loc_bar_4)
  (openable Cabinet_bar_1)
  (receptacleType Cabinet_bar_2 CabinetType)
  (receptacleAtLocation Cabinet_bar_2 loc_bar_5)
  (openable Cabinet_bar_2)
  (receptacleType Cabinet_bar_3 CabinetType)
  (receptacleAtLocation Cabinet_bar_3 loc_bar_6)
  (openable Cabinet_bar_3)
  (receptacleType Cabinet_bar_4 CabinetType)
  (receptacleAtLocation Cabinet_bar_4 loc_bar_7)
  (openable Cabinet_bar_4)
  (receptacleType Drawer_bar_1 DrawerType)
  (receptacleAtLocation Drawer_bar_1 loc_bar_8)
  (openable Drawer_bar_1)
  (receptacleType Drawer_bar_2 DrawerType)
  (receptacleAtLocation Drawer_bar_2 loc_bar_9)
  (openable Drawer_bar_2)
  (receptacleType Drawer_bar_3 DrawerType)
  (receptacleAtLocation Drawer_bar_3 loc_bar_10)
  (openable Drawer_bar_3)
  (receptacleType Fridge_bar_1 FridgeType)
  (receptacleAtLocation Fridge_bar_1 loc_bar_11)
  (openable Fridge_bar_1)
  (receptacleType Microwave_bar_1 MicrowaveType)
  (receptacleAtLocation Microwave_bar_1 loc_bar_12)
  (openable Microwave_bar_1)
  (receptacleType Sink_bar_1_bar_SinkBasin SinkBasinType)
  (receptacleAtLocation Sink_bar_1_bar_SinkBasin loc_bar_13)
  (receptacleType StoveBurner_bar_1 StoveBurnerType)
  (receptacleAtLocation StoveBurner_bar_1 loc_bar_14)
  (receptacleType Shelf_bar_1 ShelfType)
  (receptacleAtLocation Shelf_bar_1 loc_bar_15)
  (receptacleType Shelf_bar_2 ShelfType)
  (receptacleAtLocation Shelf_bar_2 loc_bar_16)
  (receptacleType GarbageCan_bar_1 GarbageCanType)
  (receptacleAtLocation GarbageCan_bar_1 loc_bar_17)
  (objectType Apple_bar_1 AppleType)
  (inReceptacle Apple_bar_1 Fridge_bar_1)
  (objectAtLocation Apple_bar_1 loc_bar_11)
  (pickupable Apple_bar_1)
  (heatable Apple_bar_1)
  (coolable Apple_bar_1)
  (cleanable Apple_bar_1)
  (objectType Bowl_bar_1 BowlType)
  (inReceptacle Bowl_bar_1 Shelf_bar_2)
  (objectAtLocation Bowl_bar_1 loc_bar_16)
  (pickupable Bowl_bar_1)
  (coolable Bowl_bar_1)
  (cleanable Bowl_bar_1)
  (objectType Bread_bar_1 BreadType)
  (inReceptacle Bread_bar_1 CounterTop_bar_3)
  (objectAtLocation Bread_bar_1 loc_bar_3)
  (pickupable Bread_bar_1)
  (heatable Bread_bar_1)
  (coolable Bread_bar_1)
  (objectType ButterKnife_bar_1 ButterKnifeType)
  (inReceptacle ButterKnife_bar_1 Drawer_bar_1)
  (objectAtLocation ButterKnife_bar_1 loc_bar_8)
  (pickupable ButterKnife_bar_1)
  (cleanable ButterKnife_bar_1)
  (objectType Cup_bar_1 CupType)
  (inReceptacle Cup_bar_1 Cabinet_bar_1)
  (objectAtLocation Cup_bar_1 loc_bar_4)
  (pickupable Cup_bar_1)
  (heatable Cup_bar_1)
  (coolable Cup_bar_1)
  (cleanable Cup_bar_1)
  (objectType Egg_bar_1 EggType)
  (inReceptacle Egg_bar_1 CounterTop_bar_1)
  (objectAtLocation Egg_bar_1 loc_bar_1)
  (pickupable Egg_bar_1)
  (heatable Egg_bar_1)
  (coolable Egg_bar_1)
  (cleanable Egg_bar_1)
  (objectType Kettle_bar_1 KettleType)
  (inReceptacle Kettle_bar_1 CounterTop_bar_2)
  (objectAtLocation Kettle_bar_1 loc_bar_2)
  (pickupable Kettle_bar_1)
  (objectType Lettuce_bar_1 LettuceType)
  (inReceptacle Lettuce_bar_1 CounterTop_bar_1)
  (objectAtLocation Lettuce_bar_1 loc_bar_1)
  (pickupable Lettuce_bar_1)
  (coolable Lettuce_bar_1)
  (cleanable Lettuce_bar_1)
  (objectType Mug_bar_1 MugType)
  (inReceptacle Mug_bar_1 Shelf_bar_1)
  (objectAtLocation Mug_bar_1 loc_bar_15)
  (pickupable Mug_bar_1)
  (heatable Mug_bar_1)
  (coolable Mug_bar_1)
  (cleanable Mug_bar_1)
  (objectType Mug_bar_2 MugType)
  (inReceptacle Mug_bar_2 Cabinet_bar_3)
  (objectAtLocation Mug_bar_2 loc_bar_6)
  (pickupable Mug_bar_2)
  (heatable Mug_bar_2)
  (coolable Mug_bar_2)
  (cleanable Mug_bar_2)
  (objectType Plate_bar_1 PlateType)
  (inReceptacle Plate_bar_1 Cabinet_bar_4)
  (objectAtLocation Plate_bar_1 loc_bar_7)
  (pickupable Plate_bar_1)
  (heatable Plate_bar_1)
  (coolable Plate_bar_1)
  (cleanable Plate_bar_1)
  (objectType Pot_bar_1 PotType)
  (inReceptacle Pot_bar_1 StoveBurner_bar_1)
  (objectAtLocation Pot_bar_1 loc_bar_14)
  (pickupable Pot_bar_1)
  (coolable Pot_bar_1)
  (cleanable Pot_bar_1)
  (objectType Potato_bar_1 PotatoType)
  (inReceptacle Potato_bar_1 CounterTop_bar_3)
  (objectAtLocation Potato_bar_1 loc_bar_3)
  (pickupable Potato_bar_1)
  (heatable Potato_bar_1)
  (coolable Potato_bar_1)
  (cleanable Potato_bar_1)
  (objectType SoapBottle_bar_1 SoapBottleType)
  (inReceptacle SoapBottle_bar_1 Sink_bar_1_bar_SinkBasin)
  (objectAtLocation SoapBottle_bar_1 loc_bar_13)
  (pickupable SoapBottle_bar_1)
  (objectType Spatula_bar_1 SpatulaType)
  (inReceptacle Spatula_bar_1 Drawer_bar_2)
  (objectAtLocation Spatula_bar_1 loc_bar_9)
  (pickupable Spatula_bar_1)
  (cleanable Spatula_bar_1)
  (objectType Tomato_bar_1 TomatoType)
  (inReceptacle Tomato_bar_1 Fridge_bar_1)
  (objectAtLocation Tomato_bar_1 loc_bar_11)
  (pickupable Tomato_bar_1)
  (heatable Tomato_bar_1)
  (coolable Tomato_bar_1)
  (cleanable Tomato_bar_1)
  (objectType Tomato_bar_2 TomatoType)
  (inReceptacle Tomato_bar_2 CounterTop_bar_2)
  (objectAtLocation Tomato_bar_2 loc_bar_2)
  (pickupable Tomato_bar_2)
  (heatable Tomato_bar_2)
  (coolable Tomato_bar_2)
  (cleanable Tomato_bar_2)
  (objectType Vase_bar_1 VaseType)
  (inReceptacle Vase_bar_1 Shelf_bar_1)
  (objectAtLocation Vase_bar_1 loc_bar_15)
  (pickupable Vase_bar_1)
  (objectType WineBottle_bar_1 WineBottleType)
  (inReceptacle WineBottle_bar_1 Cabinet_bar_2)
  (objectAtLocation WineBottle_bar_1 loc_bar_5)
  (pickupable WineBottle_bar_1)
  (coolable WineBottle_bar_1)
  (canContain CabinetType AppleType)
  (canContain CabinetType BowlType)
  (canContain CabinetType BreadType)
  (canContain CabinetType ButterKnifeType)
  (canContain CabinetType CupType)
  (canContain CabinetType EggType)
  (canContain CabinetType KettleType)
  (canContain CabinetType LettuceType)
  (canContain CabinetType MugType)
  (canContain CabinetType PlateType)
  (canContain CabinetType PotType)
  (canContain CabinetType PotatoType)
  (canContain CabinetType SoapBottleType)
  (canContain CabinetType SpatulaType)
  (canContain CabinetType TomatoType)
  (canContain CabinetType VaseType)
  (canContain CabinetType WineBottleType)
  (canContain CounterTopType AppleType)
  (canContain CounterTopType BowlType)
  (canContain CounterTopType BreadType)
  (canContain CounterTopType ButterKnifeType)
  (canContain CounterTopType CupType)
  (canContain CounterTopType EggType)
  (canContain CounterTopType KettleType)
  (canContain CounterTopType LettuceType)
  (canContain CounterTopType MugType)
  (canContain CounterTopType PlateType)
  (canContain CounterTopType PotType)
  (canContain CounterTopType PotatoType)
  (canContain CounterTopType SoapBottleType)
  (canContain CounterTopType SpatulaType)
  (canContain CounterTopType TomatoType)
  (canContain CounterTopType VaseType)
  (canContain CounterTopType WineBottleType)
  (canContain DrawerType AppleType)
  (canContain DrawerType BowlType)
  (canContain DrawerType BreadType)
  (canContain DrawerType ButterKnifeType)
  (canContain DrawerType CupType)
  (canContain DrawerType EggType)
  (canContain DrawerType KettleType)
  (canContain DrawerType LettuceType)
  (canContain DrawerType MugType)
  (canContain DrawerType PlateType)
  (canContain DrawerType PotType)
  (canContain DrawerType PotatoType)
  (canContain DrawerType SoapBottleType)
  (canContain DrawerType SpatulaType)
  (canContain DrawerType TomatoType)
  (canContain DrawerType VaseType)
  (canContain DrawerType WineBottleType)
  (canContain FridgeType AppleType)
  (canContain FridgeType BowlType)
  (canContain FridgeType BreadType)
  (canContain FridgeType CupType)
  (canContain FridgeType EggType)
  (canContain FridgeType LettuceType)
  (canContain FridgeType MugType)
  (canContain FridgeType PlateType)
  (canContain FridgeType PotType)
  (canContain FridgeType PotatoType)
  (canContain FridgeType TomatoType)
  (canContain FridgeType WineBottleType)
  (canContain GarbageCanType AppleType)
  (canContain GarbageCanType BreadType)
  (canContain GarbageCanType EggType)
  (canContain GarbageCanType LettuceType)
  (canContain GarbageCanType PotatoType)
  (canContain GarbageCanType TomatoType)
  (canContain MicrowaveType AppleType)
  (canContain MicrowaveType BowlType)
  (canContain MicrowaveType BreadType)
  (canContain MicrowaveType CupType)
  (canContain MicrowaveType EggType)
  (canContain MicrowaveType LettuceType)
  (canContain MicrowaveType MugType)
  (canContain MicrowaveType PlateType)
  (canContain MicrowaveType PotatoType)
  (canContain MicrowaveType TomatoType)
  (canContain ShelfType AppleType)
  (canContain ShelfType BowlType)
  (canContain ShelfType BreadType)
  (canContain ShelfType ButterKnifeType)
  (canContain ShelfType CupType)
  (canContain ShelfType EggType)
  (canContain ShelfType KettleType)
  (canContain ShelfType LettuceType)
  (canContain ShelfType MugType)
  (canContain ShelfType PlateType)
  (canContain ShelfType PotType)
  (canContain ShelfType PotatoType)
  (canContain ShelfType SoapBottleType)
  (canContain ShelfType SpatulaType)
  (canContain ShelfType TomatoType)
  (canContain ShelfType VaseType)
  (canContain ShelfType WineBottleType)
  (canContain SinkBasinType AppleType)
  (canContain SinkBasinType BowlType)
  (canContain SinkBasinType ButterKnifeType)
  (canContain SinkBasinType CupType)
  (canContain SinkBasinType EggType)
  (canContain SinkBasinType LettuceType)
  (canContain SinkBasinType MugType)
  (canContain SinkBasinType PlateType)
  (canContain SinkBasinType PotType)
  (canContain SinkBasinType PotatoType)
  (canContain SinkBasinType SpatulaType)
  (canContain SinkBasinType TomatoType)
  (canContain StoveBurnerType KettleType)
  (canContain StoveBurnerType PotType)
)
(:goal
            (and
                (exists (?r - receptacle)
                    (exists (?o - object)
                        (and
                            (inReceptacle ?o ?r)
                            (objectType ?o LettuceType)
                            (receptacleType ?r ShelfType)
                        )
                    )
                )
            )
        )
    )
