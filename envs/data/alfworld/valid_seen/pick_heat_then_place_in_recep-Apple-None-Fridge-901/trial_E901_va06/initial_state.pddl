(define (problem plan_trial_E901_va06)
(:domain alfred)
(:objects
  agent1 - agent
  AppleType - otype
  BowlType - otype
  BreadType - otype
  ButterKnifeType - otype
  CupType - otype
  DishSpongeType - otype
  EggType - otype
  ForkType - otype
  KnifeType - otype
  LettuceType - otype
  MugType - otype
  PanType - otype
  PepperShakerType - otype
  PlateType - otype
  PotatoType - otype
  SaltShakerType - otype
  SpoonType - otype
  TomatoType - otype
  CabinetType - rtype
  CounterTopType - rtype
  DiningTableType - rtype
  DrawerType - rtype
  FridgeType - rtype
  GarbageCanType - rtype
  MicrowaveType - rtype
  SinkBasinType - rtype
  StoveBurnerType - rtype
  CounterTop_bar_1 - receptacle
  CounterTop_bar_2 - receptacle
  Cabinet_bar_1 - receptacle
  Cabinet_bar_2 - receptacle
  Cabinet_bar_3 - receptacle
  Drawer_bar_1 - receptacle
  Drawer_bar_2 - receptacle
  Fridge_bar_1 - receptacle
  Microwave_bar_1 - receptacle
  Sink_bar_1_bar_SinkBasin - receptacle
  StoveBurner_bar_1 - receptacle
  StoveBurner_bar_2 - receptacle
  DiningTable_bar_1 - receptacle
  GarbageCan_bar_1 - receptacle
  Apple_bar_1 - object
  Apple_bar_2 - object
  Bowl_bar_1 - object
  Bread_bar_1 - object
  Cup_bar_1 - object
  DishSponge_bar_1 - object
  Egg_bar_1 - object
  Fork_bar_1 - object
  Knife_bar_1 - object
  Lettuce_bar_1 - object
  Mug_bar_1 - object
  Mug_bar_2 - object
  Pan_bar_1 - object
  PepperShaker_bar_1 - object
  Plate_bar_1 - object
  Potato_bar_1 - object
  SaltShaker_bar_1 - object
  Spoon_bar_1 - object
  Tomato_bar_1 - object
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
)
(:init
  (atLocation agent1 loc_bar_0)
  (receptacleType CounterTop_bar_1 CounterTopType)
  (receptacleAtLocation CounterTop_bar_1 loc_bar_1)
  (receptacleType CounterTop_bar_2 CounterTopType)
  (receptacleAtLocation CounterTop_bar_2 loc_bar_2)
  (receptacleType Cabinet_bar_1 CabinetType)
  (receptacleAtLocation Cabinet_bar_1 loc_bar_3)
  (openable Cabinet_bar_1)
  (receptacleType Cabinet_bar_2 CabinetType)
  (receptacleAtLocation Cabinet_bar_2 loc_bar_4)
  (openable Cabinet_bar_2)
  (receptacleType Cabinet_bar_3 CabinetType)
  (receptacleAtLocation Cabinet_bar_3 loc_bar_5)
  (openable Cabinet_bar_3)
  (receptacleType Drawer_bar_1 DrawerType)
  (receptacleAtLocation Drawer_bar_1 loc_bar_6)
  (openable Drawer_bar_1)
  (receptacleType Drawer_bar_2 DrawerType)
  (receptacleAtLocation Drawer_bar_2 loc_bar_7)
  (openable Drawer_bar_2)
  (receptacleType Fridge_bar_1 FridgeType)
  (receptacleAtLocation Fridge_bar_1 loc_bar_8)
  (openable Fridge_bar_1)
  (receptacleType Microwave_bar_1 MicrowaveType)
  (receptacleAtLocation Microwave_bar_1 loc_bar_9)
  (openable Microwave_bar_1)
  (receptacleType Sink_bar_1_bar_SinkBasin SinkBasinType)
  (receptacleAtLocation Sink_bar_1_bar_SinkBasin loc_bar_10)
  (receptacleType StoveBurner_bar_1 StoveBurnerType)
  (receptacleAtLocation StoveBurner_bar_1 loc_bar_11)
  (receptacleType StoveBurner_bar_2 StoveBurnerType)
  (receptacleAtLocation StoveBurner_bar_2 loc_bar_12)
  (receptacleType DiningTable_bar_1 DiningTableType)
  (receptacleAtLocation DiningTable_bar_1 loc_bar_13)
  (receptacleType GarbageCan_bar_1 GarbageCanType)
  (receptacleAtLocation GarbageCan_bar_1 loc_bar_14)
  (objectType Apple_bar_1 AppleType)
  (inReceptacle Apple_bar_1 CounterTop_bar_1)
  (objectAtLocation Apple_bar_1 loc_bar_1)
  (pickupable Apple_bar_1)
  (heatable Apple_bar_1)
  (coolable Apple_bar_1)
  (cleanable Apple_bar_1)
  (objectType Apple_bar_2 AppleType)
  (inReceptacle Apple_bar_2 GarbageCan_bar_1)
  (objectAtLocation Apple_bar_2 loc_bar_14)
  (pickupable Apple_bar_2)
  (heatable Apple_bar_2)
  (coolable Apple_bar_2)
  (cleanable Apple_bar_2)
  (objectType Bowl_bar_1 BowlType)
  (inReceptacle Bowl_bar_1 Cabinet_bar_3)
  (objectAtLocation Bowl_bar_1 loc_bar_5)
  (pickupable Bowl_bar_1)
  (coolable Bowl_bar_1)
  (cleanable Bowl_bar_1)
  (objectType Bread_bar_1 BreadType)
  (inReceptacle Bread_bar_1 CounterTop_bar_2)
  (objectAtLocation Bread_bar_1 loc_bar_2)
  (pickupable Bread_bar_1)
  (heatable Bread_bar_1)
  (coolable Bread_bar_1)
  (objectType Cup_bar_1 CupType)
  (inReceptacle Cup_bar_1 DiningTable_bar_1)
  (objectAtLocation Cup_bar_1 loc_bar_13)
  (pickupable Cup_bar_1)
  (heatable Cup_bar_1)
  (coolable Cup_bar_1)
  (cleanable Cup_bar_1)
  (objectType DishSponge_bar_1 DishSpongeType)
  (inReceptacle DishSponge_bar_1 Sink_bar_1_bar_SinkBasin)
  (objectAtLocation DishSponge_bar_1 loc_bar_10)
  (pickupable DishSponge_bar_1)
  (cleanable DishSponge_bar_1)
  (objectType Egg_bar_1 EggType)
  (inReceptacle Egg_bar_1 Fridge_bar_1)
  (objectAtLocation Egg_bar_1 loc_bar_8)
  (pickupable Egg_bar_1)
  (heatable Egg_bar_1)
  (coolable Egg_bar_1)
  (cleanable Egg_bar_1)
  (objectType Fork_bar_1 ForkType)
  (inReceptacle Fork_bar_1 Drawer_bar_2)
  (objectAtLocation Fork_bar_1 loc_bar_7)
  (pickupable Fork_bar_1)
  (cleanable Fork_bar_1)
  (objectType Knife_bar_1 KnifeType)
  (inReceptacle Knife_bar_1 Drawer_bar_1)
  (objectAtLocation Knife_bar_1 loc_bar_6)
  (pickupable Knife_bar_1)
  (cleanable Knife_bar_1)
  (objectType Lettuce_bar_1 LettuceType)
  (inReceptacle Lettuce_bar_1 Fridge_bar_1)
  (objectAtLocation Lettuce_bar_1 loc_bar_8)
  (pickupable Lettuce_bar_1)
  (coolable Lettuce_bar_1)
  (cleanable Lettuce_bar_1)
  (objectType Mug_bar_1 MugType)
  (inReceptacle Mug_bar_1 Cabinet_bar_1)
  (objectAtLocation Mug_bar_1 loc_bar_3)
  (pickupable Mug_bar_1)
  (heatable Mug_bar_1)
  (coolable Mug_bar_1)
  (cleanable Mug_bar_1)
  (objectType Mug_bar_2 MugType)
  (inReceptacle Mug_bar_2 DiningTable_bar_1)
  (objectAtLocation Mug_bar_2 loc_bar_13)
  (pickupable Mug_bar_2)
  (heatable Mug_bar_2)
  (coolable Mug_bar_2)
  (cleanable Mug_bar_2)
  (objectType Pan_bar_1 PanType)
  (inReceptacle Pan_bar_1 StoveBurner_bar_1)
  (objectAtLocation Pan_bar_1 loc_bar_11)
  (pickupable Pan_bar_1)
  (coolable Pan_bar_1)
  (cleanable Pan_bar_1)
  (objectType PepperShaker_bar_1 PepperShakerType)
  (inReceptacle PepperShaker_bar_1 CounterTop_bar_2)
  (objectAtLocation PepperShaker_bar_1 loc_bar_2)
  (pickupable PepperShaker_bar_1)
  (objectType Plate_bar_1 PlateType)
  (inReceptacle Plate_bar_1 Cabinet_bar_2)
  (objectAtLocation Plate_bar_1 loc_bar_4)
  (pickupable Plate_bar_1)
  (heatable Plate_bar_1)
  (coolable Plate_bar_1)
  (cleanable Plate_bar_1)
  (objectType Potato_bar_1 PotatoType)
  (inReceptacle Potato_bar_1 Fridge_bar_1)
  (objectAtLocation Potato_bar_1 loc_bar_8)
  (pickupable Potato_bar_1)
  (heatable Potato_bar_1)
  (coolable Potato_bar_1)
  (cleanable Potato_bar_1)
  (objectType SaltShaker_bar_1 SaltShakerType)
  (inReceptacle SaltShaker_bar_1 CounterTop_bar_1)
  (objectAtLocation SaltShaker_bar_1 loc_bar_1)
  (pickupable SaltShaker_bar_1)
  (objectType Spoon_bar_1 SpoonType)
  (inReceptacle Spoon_bar_1 DiningTable_bar_1)
  (objectAtLocation Spoon_bar_1 loc_bar_13)
  (pickupable Spoon_bar_1)
  (cleanable Spoon_bar_1)
  (objectType Tomato_bar_1 TomatoType)
  (inReceptacle Tomato_bar_1 DiningTable_bar_1)
  (objectAtLocation Tomato_bar_1 loc_bar_13)
  (pickupable Tomato_bar_1)
  (heatable Tomato_bar_1)
  (coolable Tomato_bar_1)
  (cleanable Tomato_bar_1)
  (canContain CabinetType AppleType)
  (canContain CabinetType BowlType)
  (canContain CabinetType BreadType)
  (canContain CabinetType CupType)
  (canContain CabinetType DishSpongeType)
  (canContain CabinetType EggType)
  (canContain CabinetType ForkType)
  (canContain CabinetType KnifeType)
  (canContain CabinetType LettuceType)
  (canContain CabinetType MugType)
  (canContain CabinetType PanType)
  (canContain CabinetType PepperShakerType)
  (canContain CabinetType PlateType)
  (canContain CabinetType PotatoType)
  (canContain CabinetType SaltShakerType)
  (canContain CabinetType SpoonType)
  (canContain CabinetType TomatoType)
  (canContain CounterTopType AppleType)
  (canContain CounterTopType BowlType)
  (canContain CounterTopType BreadType)
  (canContain CounterTopType CupType)
  (canContain CounterTopType DishSpongeType)
  (canContain CounterTopType EggType)
  (canContain CounterTopType ForkType)
  (canContain CounterTopType KnifeType)
  (canContain CounterTopType LettuceType)
  (canContain CounterTopType MugType)
  (canContain CounterTopType PanType)
  (canContain CounterTopType PepperShakerType)
  (canContain CounterTopType PlateType)
  (canContain CounterTopType PotatoType)
  (canContain CounterTopType SaltShakerType)
  (canContain CounterTopType SpoonType)
  (canContain CounterTopType TomatoType)
  (canContain DiningTableType AppleType)
  (canContain DiningTableType BowlType)
  (canContain DiningTableType BreadType)
  (canContain DiningTableType CupType)
  (canContain DiningTableType DishSpongeType)
  (canContain DiningTableType EggType)
  (canContain DiningTableType ForkType)
  (canContain DiningTableType KnifeType)
  (canContain DiningTableType LettuceType)
  (canContain DiningTableType MugType)
  (canContain DiningTableType PanType)
  (canContain DiningTableType PepperShakerType)
  (canContain DiningTableType PlateType)
  (canContain DiningTableType PotatoType)
  (canContain DiningTableType SaltShakerType)
  (canContain DiningTableType SpoonType)
  (canContain DiningTableType TomatoType)
  (canContain DrawerType AppleType)
  (canContain DrawerType BowlType)
  (canContain DrawerType BreadType)
  (canContain DrawerType CupType)
  (canContain DrawerType DishSpongeType)
  (canContain DrawerType EggType)
  (canContain DrawerType ForkType)
  (canContain DrawerType KnifeType)
  (canContain DrawerType LettuceType)
  (canContain DrawerType MugType)
  (canContain DrawerType PanType)
  (canContain DrawerType PepperShakerType)
  (canContain DrawerType PlateType)
  (canContain DrawerType PotatoType)
  (canContain DrawerType SaltShakerType)
  (canContain DrawerType SpoonType)
  (canContain DrawerType TomatoType)
  (canContain FridgeType AppleType)
  (canContain FridgeType BowlType)
  (canContain FridgeType BreadType)
  (canContain FridgeType CupType)
  (canContain FridgeType EggType)
  (canContain FridgeType LettuceType)
  (canContain FridgeType MugType)
  (canContain FridgeType PanType)
  (canContain FridgeType PlateType)
  (canContain FridgeType PotatoType)
  (canContain FridgeType TomatoType)
  (canContain GarbageCanType AppleType)
  (canContain GarbageCanType BreadType)
  (canContain GarbageCanType DishSpongeType)
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
  (canContain SinkBasinType AppleType)
  (canContain SinkBasinType BowlType)
  (canContain SinkBasinType CupType)
  (canContain SinkBasinType DishSpongeType)
  (canContain SinkBasinType EggType)
  (canContain SinkBasinType ForkType)
  (canContain SinkBasinType KnifeType)
  (canContain SinkBasinType LettuceType)
  (canContain SinkBasinType MugType)
  (canContain SinkBasinType PanType)
  (canContain SinkBasinType PlateType)
  (canContain SinkBasinType PotatoType)
  (canContain SinkBasinType SpoonType)
  (canContain SinkBasinType TomatoType)
  (canContain StoveBurnerType PanType)
)
(:goal
            (and
                (exists (?r - receptacle)
                    (exists (?o - object)
                        (and
                            (heatable ?o)
                            (objectType ?o AppleType)
                            (receptacleType ?r FridgeType)
                            (isHot ?o)
                            (inReceptacle ?o ?r)
                        )
                    )
                )
            )
        )
    )
