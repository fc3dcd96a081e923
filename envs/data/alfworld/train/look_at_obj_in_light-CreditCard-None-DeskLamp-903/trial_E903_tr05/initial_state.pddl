(define (problem plan_trial_E903_tr05)
(:domain alfred)
(:objects
  agent1 - agent
  BookType - otype
  BoxType - otype
  ButterKnifeType - otype
  CellPhoneType - otype
  CreditCardType - otype
  DeskLampType - otype
  KeyChainType - otype
  KnifeType - otype
  LaptopType - otype
  NewspaperType - otype
  PillowType - otype
  RemoteControlType - otype
  StatueType - otype
  VaseType - otype
  ArmChairType - rtype
  CabinetType - rtype
  CoffeeTableType - rtype
  DrawerType - rtype
  FridgeType - rtype
  GarbageCanType - rtype
  MicrowaveType - rtype
  ShelfType - rtype
  SideTableType - rtype
  SinkBasinType - rtype
  SofaType - rtype
  TVStandType - rtype
  Sofa_bar_1 - receptacle
  ArmChair_bar_1 - receptacle
  CoffeeTable_bar_1 - receptacle
  SideTable_bar_1 - receptacle
  SideTable_bar_2 - receptacle
  Shelf_bar_1 - receptacle
  Shelf_bar_2 - receptacle
  Drawer_bar_1 - receptacle
  Drawer_bar_2 - receptacle
  Cabinet_bar_1 - receptacle
  TVStand_bar_1 - receptacle
  GarbageCan_bar_1 - receptacle
  Book_bar_1 - object
  Book_bar_2 - object
  Box_bar_1 - object
  CellPhone_bar_1 - object
  CreditCard_bar_1 - object
  DeskLamp_bar_1 - object
  KeyChain_bar_1 - object
  Laptop_bar_1 - object
  Newspaper_bar_1 - object
  Pillow_bar_1 - object
  RemoteControl_bar_1 - object
  RemoteControl_bar_2 - object
  Statue_bar_1 - object
  Vase_bar_1 - object
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
  (receptacleType Sofa_bar_1 SofaType)
  (receptacleAtLocation Sofa_bar_1 loc_bar_1)
  (receptacleType ArmChair_bar_1 ArmChairType)
  (receptacleAtLocation ArmChair_bar_1 loc_bar_2)
  (receptacleType CoffeeTable_bar_1 CoffeeTableType)
  (receptacleAtLocation CoffeeTable_bar_1 loc_bar_3)
  (receptacleType SideTable_bar_1 SideTableType)
  (receptacleAtLocation SideTable_bar_1 loc_bar_4)
  (receptacleType SideTable_bar_2 SideTableType)
  (receptacleAtLocation SideTable_bar_2 loc_bar_5)
  (receptacleType Shelf_bar_1 ShelfType)
  (receptacleAtLocation Shelf_bar_1 loc_bar_6)
  (receptacleType Shelf_bar_2 ShelfType)
  (receptacleAtLocation Shelf_bar_2 loc_bar_7)
  (receptacleType Drawer_bar_1 DrawerType)
  (receptacleAtLocation Drawer_bar_1 loc_bar_8)
  (openable Drawer_bar_1)
  (receptacleType Drawer_bar_2 DrawerType)
  (receptacleAtLocation Drawer_bar_2 loc_bar_9)
  (openable Drawer_bar_2)
  (receptacleType Cabinet_bar_1 CabinetType)
  (receptacleAtLocation Cabinet_bar_1 loc_bar_10)
  (openable Cabinet_bar_1)
  (receptacleType TVStand_bar_1 TVStandType)
  (receptacleAtLocation TVStand_bar_1 loc_bar_11)
  (receptacleType GarbageCan_bar_1 GarbageCanType)
  (receptacleAtLocation GarbageCan_bar_1 loc_bar_12)
  (objectType Book_bar_1 BookType)
  (inReceptacle Book_bar_1 CoffeeTable_bar_1)
  (objectAtLocation Book_bar_1 loc_bar_3)
  (pickupable Book_bar_1)
  (objectType Book_bar_2 BookType)
  (inReceptacle Book_bar_2 Shelf_bar_2)
  (objectAtLocation Book_bar_2 loc_bar_7)
  (pickupable Book_bar_2)
  (objectType Box_bar_1 BoxType)
  (inReceptacle Box_bar_1 Cabinet_bar_1)
  (objectAtLocation Box_bar_1 loc_bar_10)
  (pickupable Box_bar_1)
  (objectType CellPhone_bar_1 CellPhoneType)
  (inReceptacle CellPhone_bar_1 Drawer_bar_2)
  (objectAtLocation CellPhone_bar_1 loc_bar_9)
  (pickupable CellPhone_bar_1)
  (objectType CreditCard_bar_1 CreditCardType)
  (inReceptacle CreditCard_bar_1 SideTable_bar_2)
  (objectAtLocation CreditCard_bar_1 loc_bar_5)
  (pickupable CreditCard_bar_1)
  (objectType DeskLamp_bar_1 DeskLampType)
  (inReceptacle DeskLamp_bar_1 SideTable_bar_1)
  (objectAtLocation DeskLamp_bar_1 loc_bar_4)
  (toggleable DeskLamp_bar_1)
  (objectType KeyChain_bar_1 KeyChainType)
  (inReceptacle KeyChain_bar_1 Drawer_bar_1)
  (objectAtLocation KeyChain_bar_1 loc_bar_8)
  (pickupable KeyChain_bar_1)
  (objectType Laptop_bar_1 LaptopType)
  (inReceptacle Laptop_bar_1 Sofa_bar_1)
  (objectAtLocation Laptop_bar_1 loc_bar_1)
  (pickupable Laptop_bar_1)
  (objectType Newspaper_bar_1 NewspaperType)
  (inReceptacle Newspaper_bar_1 Sofa_bar_1)
  (objectAtLocation Newspaper_bar_1 loc_bar_1)
  (pickupable Newspaper_bar_1)
  (objectType Pillow_bar_1 PillowType)
  (inReceptacle Pillow_bar_1 ArmChair_bar_1)
  (objectAtLocation Pillow_bar_1 loc_bar_2)
  (pickupable Pillow_bar_1)
  (objectType RemoteControl_bar_1 RemoteControlType)
  (inReceptacle RemoteControl_bar_1 CoffeeTable_bar_1)
  (objectAtLocation RemoteControl_bar_1 loc_bar_3)
  (pickupable RemoteControl_bar_1)
  (objectType RemoteControl_bar_2 RemoteControlType)
  (inReceptacle RemoteControl_bar_2 TVStand_bar_1)
  (objectAtLocation RemoteControl_bar_2 loc_bar_11)
  (pickupable RemoteControl_bar_2)
  (objectType Statue_bar_1 StatueType)
  (inReceptacle Statue_bar_1 Shelf_bar_1)
  (objectAtLocation Statue_bar_1 loc_bar_6)
  (pickupable Statue_bar_1)
  (objectType Vase_bar_1 VaseType)
  (inReceptacle Vase_bar_1 Shelf_bar_1)
  (objectAtLocation Vase_bar_1 loc_bar_6)
  (pickupable Vase_bar_1)
  (canContain ArmChairType BookType)
  (canContain ArmChairType CellPhoneType)
  (canContain ArmChairType CreditCardType)
  (canContain ArmChairType KeyChainType)
  (canContain ArmChairType LaptopType)
  (canContain ArmChairType NewspaperType)
  (canContain ArmChairType PillowType)
  (canContain ArmChairType RemoteControlType)
  (canContain CabinetType BookType)
  (canContain CabinetType BoxType)
  (canContain CabinetType CellPhoneType)
  (canContain CabinetType CreditCardType)
  (canContain CabinetType KeyChainType)
  (canContain CabinetType LaptopType)
  (canContain CabinetType NewspaperType)
  (canContain CabinetType PillowType)
  (canContain CabinetType RemoteControlType)
  (canContain CabinetType StatueType)
  (canContain CabinetType VaseType)
  (canContain CoffeeTableType BookType)
  (canContain CoffeeTableType BoxType)
  (canContain CoffeeTableType CellPhoneType)
  (canContain CoffeeTableType CreditCardType)
  (canContain CoffeeTableType KeyChainType)
  (canContain CoffeeTableType LaptopType)
  (canContain CoffeeTableType NewspaperType)
  (canContain CoffeeTableType PillowType)
  (canContain CoffeeTableType RemoteControlType)
  (canContain CoffeeTableType StatueType)
  (canContain CoffeeTableType VaseType)
  (canContain DrawerType BookType)
  (canContain DrawerType BoxType)
  (canContain DrawerType CellPhoneType)
  (canContain DrawerType CreditCardType)
  (canContain DrawerType KeyChainType)
  (canContain DrawerType LaptopType)
  (canContain DrawerType NewspaperType)
  (canContain DrawerType PillowType)
  (canContain DrawerType RemoteControlType)
  (canContain DrawerType StatueType)
  (canContain DrawerType VaseType)
  (canContain GarbageCanType CreditCardType)
  (canContain GarbageCanType NewspaperType)
  (canContain ShelfType BookType)
  (canContain ShelfType BoxType)
  (canContain ShelfType CellPhoneType)
  (canContain ShelfType CreditCardType)
  (canContain ShelfType KeyChainType)
  (canContain ShelfType LaptopType)
  (canContain ShelfType NewspaperType)
  (canContain ShelfType PillowType)
  (canContain ShelfType RemoteControlType)
  (canContain ShelfType StatueType)
  (canContain ShelfType VaseType)
  (canContain SideTableType BookType)
  (canContain SideTableType BoxType)
  (canContain SideTableType CellPhoneType)
  (canContain SideTableType CreditCardType)
  (canContain SideTableType KeyChainType)
  (canContain SideTableType LaptopType)
  (canContain SideTableType NewspaperType)
  (canContain SideTableType PillowType)
  (canContain SideTableType RemoteControlType)
  (canContain SideTableType StatueType)
  (canContain SideTableType VaseType)
  (canContain SofaType BookType)
  (canContain SofaType CellPhoneType)
  (canContain SofaType CreditCardType)
  (canContain SofaType KeyChainType)
  (canContain SofaType LaptopType)
  (canContain SofaType NewspaperType)
  (canContain SofaType PillowType)
  (canContain SofaType RemoteControlType)
  (canContain TVStandType BookType)
  (canContain TVStandType BoxType)
  (canContain TVStandType CellPhoneType)
  (canContain TVStandType CreditCardType)
  (canContain TVStandType KeyChainType)
  (canContain TVStandType LaptopType)
  (canContain TVStandType NewspaperType)
  (canContain TVStandType PillowType)
  (canContain TVStandType RemoteControlType)
  (canContain TVStandType StatueType)
  (canContain TVStandType VaseType)
)
(:goal
             (and
                 (exists (?ot - object
                          ?r - receptacle
                          ?a - agent
                          ?l - location)
                     (and
                         (objectType ?ot DeskLampType)
                         (toggleable ?ot)
                         (isToggled ?ot)
                         (receptacleAtLocation ?r ?l)
                         (atLocation ?a ?l)
                         (inReceptacle ?ot ?r)
                     )
                 )
                 (exists (?o - object
                          ?a - agent)
                     (and
                         (objectType ?o CreditCardType)
                         (holds ?a ?o)
                     )
                 )
             )
        )
    )
