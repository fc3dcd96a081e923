(define (problem plan_trial_E953_va07)
(:domain alfred)
(:objects
  agent1 - agent
  AppleType - otype
  BowlType - otype
  ButterKnifeType - otype
  CandleType - otype
  ClothType - otype
  CupType - otype
  DishSpongeType - otype
  KnifeType - otype
  MugType - otype
  PlateType - otype
  PotatoType - otype
  SoapBarType - otype
  SprayBottleType - otype
  WineBottleType - otype
  CabinetType - rtype
  CounterTopType - rtype
  DrawerType - rtype
  FridgeType - rtype
  GarbageCanType - rtype
  MicrowaveType - rtype
  ShelfType - rtype
  SideTableType - rtype
  SinkBasinType - rtype
  Sink_bar_1_bar_SinkBasin - receptacle
  CounterTop_bar_1 - receptacle
  CounterTop_bar_2 - receptacle
  Cabinet_bar_1 - receptacle
  Cabinet_bar_2 - receptacle
  Drawer_bar_1 - receptacle
  Shelf_bar_1 - receptacle
  Shelf_bar_2 - receptacle
  Shelf_bar_3 - receptacle
  GarbageCan_bar_1 - receptacle
  Fridge_bar_1 - receptacle
  Microwave_bar_1 - receptacle
  SideTable_bar_1 - receptacle
  Apple_bar_1 - object
  Bowl_bar_1 - object
  Candle_bar_1 - object
  Cloth_bar_1 - object
  Cup_bar_1 - object
  DishSponge_bar_1 - object
  Mug_bar_1 - object
  Mug_bar_2 - object
  Plate_bar_1 - object
  Potato_bar_1 - object
  SoapBar_bar_1 - object
  SoapBar_bar_2 - object
  SprayBottle_bar_1 - object
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
)
(:init
  (atLocation agent1 loc_bar_0)
  (receptacleType Sink_bar_1_bar_SinkBasin SinkBasinType)
  (receptacleAtLocation Sink_bar_1_bar_SinkBasin loc_bar_1)
  (receptacleType CounterTop_bar_1 CounterTopType)
  (receptacleAtLocation CounterTop_bar_1 loc_bar_2)
  (receptacleType CounterTop_bar_2 CounterTopType)
  (receptacleAtLocation CounterTop_bar_2 loc_bar_3)
  (receptacleType Cabinet_bar_1 CabinetType)
  (receptacleAtLocation Cabinet_bar_1 loc_bar_4)
  (openable Cabinet_bar_1)
  (receptacleType Cabinet_bar_2 CabinetType)
  (receptacleAtLocation Cabinet_bar_2 loc_bar_5)
  (openable Cabinet_bar_2)
  (receptacleType Drawer_bar_1 DrawerType)
  (receptacleAtLocation Drawer_bar_1 loc_bar_6)
  (openable Drawer_bar_1)
  (receptacleType Shelf_bar_1 ShelfType)
  (receptacleAtLocation Shelf_bar_1 loc_bar_7)
  (receptacleType Shelf_bar_2 ShelfType)
  (receptacleAtLocation Shelf_bar_2 loc_bar_8)
  (receptacleType Shelf_bar_3 ShelfType)
  (receptacleAtLocation Shelf_bar_3 loc_bar_9)
  (receptacleType GarbageCan_bar_1 GarbageCanType)
  (receptacleAtLocation GarbageCan_bar_1 loc_bar_10)
  (receptacleType Fridge_bar_1 FridgeType)
  (receptacleAtLocation Fridge_bar_1 loc_bar_11)
  (openable Fridge_bar_1)
  (receptacleType Microwave_bar_1 MicrowaveType)
  (receptacleAtLocation Microwave_bar_1 loc_bar_12)
  (openable Microwave_bar_1)
  (receptacleType SideTable_bar_1 SideTableType)
  (receptacleAtLocation SideTable_bar_1 loc_bar_13)
  (objectType Apple_bar_1 AppleType)
  (inReceptacle Apple_bar_1 Fridge_bar_1)
  (objectAtLocation Apple_bar_1 loc_bar_11)
  (pickupable Apple_bar_1)
  (heatable Apple_bar_1)
  (coolable Apple_bar_1)
  (cleanable Apple_bar_1)
  (objectType Bowl_bar_1 BowlType)
  (inReceptacle Bowl_bar_1 Shelf_bar_3)
  (objectAtLocation Bowl_bar_1 loc_bar_9)
  (pickupable Bowl_bar_1)
  (coolable Bowl_bar_1)
  (cleanable Bowl_bar_1)
  (objectType Candle_bar_1 CandleType)
  (inReceptacle Candle_bar_1 SideTable_bar_1)
  (objectAtLocation Candle_bar_1 loc_bar_13)
  (pickupable Candle_bar_1)
  (objectType Cloth_bar_1 ClothType)
  (inReceptacle Cloth_bar_1 Shelf_bar_1)
  (objectAtLocation Cloth_bar_1 loc_bar_7)
  (pickupable Cloth_bar_1)
  (cleanable Cloth_bar_1)
  (objectType Cup_bar_1 CupType)
  (inReceptacle Cup_bar_1 Cabinet_bar_2)
  (objectAtLocation Cup_bar_1 loc_bar_5)
  (pickupable Cup_bar_1)
  (heatable Cup_bar_1)
  (coolable Cup_bar_1)
  (cleanable Cup_bar_1)
  (objectType DishSponge_bar_1 DishSpongeType)
  (inReceptacle DishSponge_bar_1 CounterTop_bar_2)
  (objectAtLocation DishSponge_bar_1 loc_bar_3)
  (pickupable DishSponge_bar_1)
  (cleanable DishSponge_bar_1)
  (objectType Mug_bar_1 MugType)
  (inReceptacle Mug_bar_1 Cabinet_bar_1)
  (objectAtLocation Mug_bar_1 loc_bar_4)
  (pickupable Mug_bar_1)
  (heatable Mug_bar_1)
  (coolable Mug_bar_1)
  (cleanable Mug_bar_1)
  (objectType Mug_bar_2 MugType)
  (inReceptacle Mug_bar_2 SideTable_bar_1)
  (objectAtLocation Mug_bar_2 loc_bar_13)
  (pickupable Mug_bar_2)
  (heatable Mug_bar_2)
  (coolable Mug_bar_2)
  (cleanable Mug_bar_2)
  (objectType Plate_bar_1 PlateType)
  (inReceptacle Plate_bar_1 CounterTop_bar_1)
  (objectAtLocation Plate_bar_1 loc_bar_2)
  (pickupable Plate_bar_1)
  (heatable Plate_bar_1)
  (coolable Plate_bar_1)
  (cleanable Plate_bar_1)
  (objectType Potato_bar_1 PotatoType)
  (inReceptacle Potato_bar_1 CounterTop_bar_2)
  (objectAtLocation Potato_bar_1 loc_bar_3)
  (pickupable Potato_bar_1)
  (heatable Potato_bar_1)
  (coolable Potato_bar_1)
  (cleanable Potato_bar_1)
  (objectType SoapBar_bar_1 SoapBarType)
  (inReceptacle SoapBar_bar_1 Shelf_bar_2)
  (objectAtLocation SoapBar_bar_1 loc_bar_8)
  (pickupable SoapBar_bar_1)
  (cleanable SoapBar_bar_1)
  (objectType SoapBar_bar_2 SoapBarType)
  (inReceptacle SoapBar_bar_2 CounterTop_bar_1)
  (objectAtLocation SoapBar_bar_2 loc_bar_2)
  (pickupable SoapBar_bar_2)
  (cleanable SoapBar_bar_2)
  (objectType SprayBottle_bar_1 SprayBottleType)
  (inReceptacle SprayBottle_bar_1 Shelf_bar_3)
  (objectAtLocation SprayBottle_bar_1 loc_bar_9)
  (pickupable SprayBottle_bar_1)
  (objectType WineBottle_bar_1 WineBottleType)
  (inReceptacle WineBottle_bar_1 Microwave_bar_1)
  (objectAtLocation WineBottle_bar_1 loc_bar_12)
  (pickupable WineBottle_bar_1)
  (coolable WineBottle_bar_1)
  (canContain CabinetType AppleType)
  (canContain CabinetType BowlType)
  (canContain CabinetType CandleType)
  (canContain CabinetType ClothType)
  (canContain CabinetType CupType)
  (canContain CabinetType DishSpongeType)
  (canContain CabinetType MugType)
  (canContain CabinetType PlateType)
  (canContain CabinetType PotatoType)
  (canContain CabinetType SoapBarType)
  (canContain CabinetType SprayBottleType)
  (canContain CabinetType WineBottleType)
  (canContain CounterTopType AppleType)
  (canContain CounterTopType BowlType)
  (canContain CounterTopType CandleType)
  (canContain CounterTopType ClothType)
  (canContain CounterTopType CupType)
  (canContain CounterTopType DishSpongeType)
  (canContain CounterTopType MugType)
  (canContain CounterTopType PlateType)
  (canContain CounterTopType PotatoType)
  (canContain CounterTopType SoapBarType)
  (canContain CounterTopType SprayBottleType)
  (canContain CounterTopType WineBottleType)
  (canContain DrawerType AppleType)
  (canContain DrawerType BowlType)
  (canContain DrawerType CandleType)
  (canContain DrawerType ClothType)
  (canContain DrawerType CupType)
  (canContain DrawerType DishSpongeType)
  (canContain DrawerType MugType)
  (canContain DrawerType PlateType)
  (canContain DrawerType PotatoType)
  (canContain DrawerType SoapBarType)
  (canContain DrawerType SprayBottleType)
  (canContain DrawerType WineBottleType)
  (canContain FridgeType AppleType)
  (canContain FridgeType BowlType)
  (canContain FridgeType CupType)
  (canContain FridgeType MugType)
  (canContain FridgeType PlateType)
  (canContain FridgeType PotatoType)
  (canContain FridgeType WineBottleType)
  (canContain GarbageCanType AppleType)
  (canContain GarbageCanType CandleType)
  (canContain GarbageCanType ClothType)
  (canContain GarbageCanType DishSpongeType)
  (canContain GarbageCanType PotatoType)
  (canContain GarbageCanType SoapBarType)
  (canContain GarbageCanType SprayBottleType)
  (canContain MicrowaveType AppleType)
  (canContain MicrowaveType BowlType)
  (canContain MicrowaveType CupType)
  (canContain MicrowaveType MugType)
  (canContain MicrowaveType PlateType)
  (canContain MicrowaveType PotatoType)
  (canContain ShelfType AppleType)
  (canContain ShelfType BowlType)
  (canContain ShelfType CandleType)
  (canContain ShelfType ClothType)
  (canContain ShelfType CupType)
  (canContain ShelfType DishSpongeType)
  (canContain ShelfType MugType)
  (canContain ShelfType PlateType)
  (canContain ShelfType PotatoType)
  (canContain ShelfType SoapBarType)
  (canContain ShelfType SprayBottleType)
  (canContain ShelfType WineBottleType)
  (canContain SideTableType AppleType)
  (canContain SideTableType BowlType)
  (canContain SideTableType CandleType)
  (canContain SideTableType ClothType)
  (canContain SideTableType CupType)
  (canContain SideTableType DishSpongeType)
  (canContain SideTableType MugType)
  (canContain SideTableType PlateType)
  (canContain SideTableType PotatoType)
  (canContain SideTableType SoapBarType)
  (canContain SideTableType SprayBottleType)
  (canContain SideTableType WineBottleType)
  (canContain SinkBasinType AppleType)
  (canContain SinkBasinType BowlType)
  (canContain SinkBasinType ClothType)
  (canContain SinkBasinType CupType)
  (canContain SinkBasinType DishSpongeType)
  (canContain SinkBasinType MugType)
  (canContain SinkBasinType PlateType)
  (canContain SinkBasinType PotatoType)
  (canContain SinkBasinType SoapBarType)
)
(:goal
            (and
                (exists (?r - receptacle)
                    (exists (?o - object)
                        (and
                            (heatable ?o)
                            (objectType ?o CupType)
                            (receptacleType ?r SideTableType)
                            (isHot ?o)
                            (inReceptacle ?o ?r)
                        )
                    )
                )
            )
        )
    )
