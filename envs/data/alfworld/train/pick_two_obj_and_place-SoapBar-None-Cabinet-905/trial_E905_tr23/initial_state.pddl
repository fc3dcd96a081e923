(define (problem plan_trial_E905_tr23)
(:domain alfred)
(:objects
  agent1 - agent
  ButterKnifeType - otype
  CandleType - otype
  ClothType - otype
  DishSpongeType - otype
  KnifeType - otype
  SoapBarType - otype
  SoapBottleType - otype
  SprayBottleType - otype
  TissueBoxType - otype
  ToiletPaperType - otype
  CabinetType - rtype
  CounterTopType - rtype
  DrawerType - rtype
  FridgeType - rtype
  GarbageCanType - rtype
  MicrowaveType - rtype
  ShelfType - rtype
  SinkBasinType - rtype
  ToiletType - rtype
  Sink_bar_1_bar_SinkBasin - receptacle
  Sink_bar_2_bar_SinkBasin - receptacle
  CounterTop_bar_1 - receptacle
  Cabinet_bar_1 - receptacle
  Cabinet_bar_2 - receptacle
  Cabinet_bar_3 - receptacle
  Drawer_bar_1 - receptacle
  Drawer_bar_2 - receptacle
  Toilet_bar_1 - receptacle
  Shelf_bar_1 - receptacle
  Shelf_bar_2 - receptacle
  GarbageCan_bar_1 - receptacle
  Candle_bar_1 - object
  Cloth_bar_1 - object
  Cloth_bar_2 - object
  DishSponge_bar_1 - object
  SoapBar_bar_1 - object
  SoapBar_bar_2 - object
  SoapBottle_bar_1 - object
  SprayBottle_bar_1 - object
  TissueBox_bar_1 - object
  ToiletPaper_bar_1 - object
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
)
(:init
  (atLocation agent1 loc_bar_0)
  (receptacleType Sink_bar_1_bar_SinkBasin SinkBasinType)
  (receptacleAtLocation Sink_bar_1_bar_SinkBasin loc_bar_1)
  (receptacleType Sink_bar_2_bar_SinkBasin SinkBasinType)
  (receptacleAtLocation Sink_bar_2_bar_SinkBasin loc_bar_2)
  (receptacleType CounterTop_bar_1 CounterTopType)
  (receptacleAtLocation CounterTop_bar_1 loc_bar_3)
  (receptacleType Cabinet_bar_1 CabinetType)
  (receptacleAtLocation Cabinet_bar_1 loc_bar_4)
  (openable Cabinet_bar_1)
  (receptacleType Cabinet_bar_2 CabinetType)
  (receptacleAtLocation Cabinet_bar_2 loc_bar_5)
  (openable Cabinet_bar_2)
  (receptacleType Cabinet_bar_3 CabinetType)
  (receptacleAtLocation Cabinet_bar_3 loc_bar_6)
  (openable Cabinet_bar_3)
  (receptacleType Drawer_bar_1 DrawerType)
  (receptacleAtLocation Drawer_bar_1 loc_bar_7)
  (openable Drawer_bar_1)
  (receptacleType Drawer_bar_2 DrawerType)
  (receptacleAtLocation Drawer_bar_2 loc_bar_8)
  (openable Drawer_bar_2)
  (receptacleType Toilet_bar_1 ToiletType)
  (receptacleAtLocation Toilet_bar_1 loc_bar_9)
  (receptacleType Shelf_bar_1 ShelfType)
  (receptacleAtLocation Shelf_bar_1 loc_bar_10)
  (receptacleType Shelf_bar_2 ShelfType)
  (receptacleAtLocation Shelf_bar_2 loc_bar_11)
  (receptacleType GarbageCan_bar_1 GarbageCanType)
  (receptacleAtLocation GarbageCan_bar_1 loc_bar_12)
  (objectType Candle_bar_1 CandleType)
  (inReceptacle Candle_bar_1 CounterTop_bar_1)
  (objectAtLocation Candle_bar_1 loc_bar_3)
  (pickupable Candle_bar_1)
  (objectType Cloth_bar_1 ClothType)
  (inReceptacle Cloth_bar_1 Cabinet_bar_1)
  (objectAtLocation Cloth_bar_1 loc_bar_4)
  (pickupable Cloth_bar_1)
  (cleanable Cloth_bar_1)
  (objectType Cloth_bar_2 ClothType)
  (inReceptacle Cloth_bar_2 Shelf_bar_1)
  (objectAtLocation Cloth_bar_2 loc_bar_10)
  (pickupable Cloth_bar_2)
  (cleanable Cloth_bar_2)
  (objectType DishSponge_bar_1 DishSpongeType)
  (inReceptacle DishSponge_bar_1 Drawer_bar_1)
  (objectAtLocation DishSponge_bar_1 loc_bar_7)
  (pickupable DishSponge_bar_1)
  (cleanable DishSponge_bar_1)
  (objectType SoapBar_bar_1 SoapBarType)
  (inReceptacle SoapBar_bar_1 CounterTop_bar_1)
  (objectAtLocation SoapBar_bar_1 loc_bar_3)
  (pickupable SoapBar_bar_1)
  (cleanable SoapBar_bar_1)
  (objectType SoapBar_bar_2 SoapBarType)
  (inReceptacle SoapBar_bar_2 Toilet_bar_1)
  (objectAtLocation SoapBar_bar_2 loc_bar_9)
  (pickupable SoapBar_bar_2)
  (cleanable SoapBar_bar_2)
  (objectType SoapBottle_bar_1 SoapBottleType)
  (inReceptacle SoapBottle_bar_1 Shelf_bar_1)
  (objectAtLocation SoapBottle_bar_1 loc_bar_10)
  (pickupable SoapBottle_bar_1)
  (objectType SprayBottle_bar_1 SprayBottleType)
  (inReceptacle SprayBottle_bar_1 Shelf_bar_2)
  (objectAtLocation SprayBottle_bar_1 loc_bar_11)
  (pickupable SprayBottle_bar_1)
  (objectType TissueBox_bar_1 TissueBoxType)
  (inReceptacle TissueBox_bar_1 Shelf_bar_2)
  (objectAtLocation TissueBox_bar_1 loc_bar_11)
  (pickupable TissueBox_bar_1)
  (objectType ToiletPaper_bar_1 ToiletPaperType)
  (inReceptacle ToiletPaper_bar_1 Toilet_bar_1)
  (objectAtLocation ToiletPaper_bar_1 loc_bar_9)
  (pickupable ToiletPaper_bar_1)
  (canContain CabinetType CandleType)
  (canContain CabinetType ClothType)
  (canContain CabinetType DishSpongeType)
  (canContain CabinetType SoapBarType)
  (canContain CabinetType SoapBottleType)
  (canContain CabinetType SprayBottleType)
  (canContain CabinetType TissueBoxType)
  (canContain CabinetType ToiletPaperType)
  (canContain CounterTopType CandleType)
  (canContain CounterTopType ClothType)
  (canContain CounterTopType DishSpongeType)
  (canContain CounterTopType SoapBarType)
  (canContain CounterTopType SoapBottleType)
  (canContain CounterTopType SprayBottleType)
  (canContain CounterTopType TissueBoxType)
  (canContain CounterTopType ToiletPaperType)
  (canContain DrawerType CandleType)
  (canContain DrawerType ClothType)
  (canContain DrawerType DishSpongeType)
  (canContain DrawerType SoapBarType)
  (canContain DrawerType SoapBottleType)
  (canContain DrawerType SprayBottleType)
  (canContain DrawerType TissueBoxType)
  (canContain DrawerType ToiletPaperType)
  (canContain GarbageCanType CandleType)
  (canContain GarbageCanType ClothType)
  (canContain GarbageCanType DishSpongeType)
  (canContain GarbageCanType SoapBarType)
  (canContain GarbageCanType SprayBottleType)
  (canContain GarbageCanType ToiletPaperType)
  (canContain ShelfType CandleType)
  (canContain ShelfType ClothType)
  (canContain ShelfType DishSpongeType)
  (canContain ShelfType SoapBarType)
  (canContain ShelfType SoapBottleType)
  (canContain ShelfType SprayBottleType)
  (canContain ShelfType TissueBoxType)
  (canContain ShelfType ToiletPaperType)
  (canContain SinkBasinType ClothType)
  (canContain SinkBasinType DishSpongeType)
  (canContain SinkBasinType SoapBarType)
  (canContain ToiletType CandleType)
  (canContain ToiletType ClothType)
  (canContain ToiletType SoapBarType)
  (canContain ToiletType SprayBottleType)
  (canContain ToiletType ToiletPaperType)
)
(:goal
                    (and
                        (exists (?r - receptacle)
                            (exists (?o1 - object)
                                (and
                                    (objectType ?o1 SoapBarType)
                                    (receptacleType ?r CabinetType)
                                    (inReceptacle ?o1 ?r)
                                    (exists (?o2 - object)
                                        (and
                                            (not (= ?o1 ?o2))
                                            (objectType ?o2 SoapBarType)
                                            (receptacleType ?r CabinetType)
                                            (inReceptacle ?o2 ?r)
                                        )
                                    )
                                )
                            )
                        )
                    )
                )
            )
