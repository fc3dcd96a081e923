(define (problem plan_trial_E952_va11)
(:domain alfred)
(:objects
  agent1 - agent
  AlarmClockType - otype
  BookType - otype
  BoxType - otype
  ButterKnifeType - otype
  CDType - otype
  CellPhoneType - otype
  CreditCardType - otype
  DeskLampType - otype
  KeyChainType - otype
  KnifeType - otype
  LaptopType - otype
  NewspaperType - otype
  PenType - otype
  PencilType - otype
  CabinetType - rtype
  DeskType - rtype
  DrawerType - rtype
  FridgeType - rtype
  GarbageCanType - rtype
  MicrowaveType - rtype
  SafeType - rtype
  ShelfType - rtype
  SideTableType - rtype
  SinkBasinType - rtype
  SofaType - rtype
  Desk_bar_1 - receptacle
  Desk_bar_2 - receptacle
  Shelf_bar_1 - receptacle
  Shelf_bar_2 - receptacle
  Shelf_bar_3 - receptacle
  Drawer_bar_1 - receptacle
  Drawer_bar_2 - receptacle
  Drawer_bar_3 - receptacle
  Drawer_bar_4 - receptacle
  Cabinet_bar_1 - receptacle
  Sofa_bar_1 - receptacle
  SideTable_bar_1 - receptacle
  GarbageCan_bar_1 - receptacle
  Safe_bar_1 - receptacle
  AlarmClock_bar_1 - object
  Book_bar_1 - object
  Box_bar_1 - object
  CD_bar_1 - object
  CD_bar_2 - object
  CellPhone_bar_1 - object
  CreditCard_bar_1 - object
  CreditCard_bar_2 - object
  DeskLamp_bar_1 - object
  KeyChain_bar_1 - object
  Laptop_bar_1 - object
  Newspaper_bar_1 - object
  Pen_bar_1 - object
  Pencil_bar_1 - object
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
  (receptacleType Desk_bar_1 DeskType)
  (receptacleAtLocation Desk_bar_1 loc_bar_1)
  (receptacleType Desk_bar_2 DeskType)
  (receptacleAtLocation Desk_bar_2 loc_bar_2)
  (receptacleType Shelf_bar_1 ShelfType)
  (receptacleAtLocation Shelf_bar_1 loc_bar_3)
  (receptacleType Shelf_bar_2 ShelfType)
  (receptacleAtLocation Shelf_bar_2 loc_bar_4)
  (receptacleType Shelf_bar_3 ShelfType)
  (receptacleAtLocation Shelf_bar_3 loc_bar_5)
  (receptacleType Drawer_bar_1 DrawerType)
  (receptacleAtLocation Drawer_bar_1 loc_bar_6)
  (openable Drawer_bar_1)
  (receptacleType Drawer_bar_2 DrawerType)
  (receptacleAtLocation Drawer_bar_2 loc_bar_7)
  (openable Drawer_bar_2)
  (receptacleType Drawer_bar_3 DrawerType)
  (receptacleAtLocation Drawer_bar_3 loc_bar_8)
  (openable Drawer_bar_3)
  (receptacleType Drawer_bar_4 DrawerType)
  (receptacleAtLocation Drawer_bar_4 loc_bar_9)
  (openable Drawer_bar_4)
  (receptacleType Cabinet_bar_1 CabinetType)
  (receptacleAtLocation Cabinet_bar_1 loc_bar_10)
  (openable Cabinet_bar_1)
  (receptacleType Sofa_bar_1 SofaType)
  (receptacleAtLocation Sofa_bar_1 loc_bar_11)
  (receptacleType SideTable_bar_1 SideTableType)
  (receptacleAtLocation SideTable_bar_1 loc_bar_12)
  (receptacleType GarbageCan_bar_1 GarbageCanType)
  (receptacleAtLocation GarbageCan_bar_1 loc_bar_13)
  (receptacleType Safe_bar_1 SafeType)
  (receptacleAtLocation Safe_bar_1 loc_bar_14)
  (openable Safe_bar_1)
  (objectType AlarmClock_bar_1 AlarmClockType)
  (inReceptacle AlarmClock_bar_1 Shelf_bar_2)
  (objectAtLocation AlarmClock_bar_1 loc_bar_4)
  (pickupable AlarmClock_bar_1)
  (objectType Book_bar_1 BookType)
  (inReceptacle Book_bar_1 Shelf_bar_3)
  (objectAtLocation Book_bar_1 loc_bar_5)
  (pickupable Book_bar_1)
  (objectType Box_bar_1 BoxType)
  (inReceptacle Box_bar_1 GarbageCan_bar_1)
  (objectAtLocation Box_bar_1 loc_bar_13)
  (pickupable Box_bar_1)
  (objectType CD_bar_1 CDType)
  (inReceptacle CD_bar_1 Shelf_bar_1)
  (objectAtLocation CD_bar_1 loc_bar_3)
  (pickupable CD_bar_1)
  (objectType CD_bar_2 CDType)
  (inReceptacle CD_bar_2 Drawer_bar_3)
  (objectAtLocation CD_bar_2 loc_bar_8)
  (pickupable CD_bar_2)
  (objectType CellPhone_bar_1 CellPhoneType)
  (inReceptacle CellPhone_bar_1 Sofa_bar_1)
  (objectAtLocation CellPhone_bar_1 loc_bar_11)
  (pickupable CellPhone_bar_1)
  (objectType CreditCard_bar_1 CreditCardType)
  (inReceptacle CreditCard_bar_1 Cabinet_bar_1)
  (objectAtLocation CreditCard_bar_1 loc_bar_10)
  (pickupable CreditCard_bar_1)
  (objectType CreditCard_bar_2 CreditCardType)
  (inReceptacle CreditCard_bar_2 Safe_bar_1)
  (objectAtLocation CreditCard_bar_2 loc_bar_14)
  (pickupable CreditCard_bar_2)
  (objectType DeskLamp_bar_1 DeskLampType)
  (inReceptacle DeskLamp_bar_1 Desk_bar_2)
  (objectAtLocation DeskLamp_bar_1 loc_bar_2)
  (toggleable DeskLamp_bar_1)
  (objectType KeyChain_bar_1 KeyChainType)
  (inReceptacle KeyChain_bar_1 SideTable_bar_1)
  (objectAtLocation KeyChain_bar_1 loc_bar_12)
  (pickupable KeyChain_bar_1)
  (objectType Laptop_bar_1 LaptopType)
  (inReceptacle Laptop_bar_1 Desk_bar_1)
  (objectAtLocation Laptop_bar_1 loc_bar_1)
  (pickupable Laptop_bar_1)
  (objectType Newspaper_bar_1 NewspaperType)
  (inReceptacle Newspaper_bar_1 Sofa_bar_1)
  (objectAtLocation Newspaper_bar_1 loc_bar_11)
  (pickupable Newspaper_bar_1)
  (objectType Pen_bar_1 PenType)
  (inReceptacle Pen_bar_1 Desk_bar_1)
  (objectAtLocation Pen_bar_1 loc_bar_1)
  (pickupable Pen_bar_1)
  (objectType Pencil_bar_1 PencilType)
  (inReceptacle Pencil_bar_1 Drawer_bar_1)
  (objectAtLocation Pencil_bar_1 loc_bar_6)
  (pickupable Pencil_bar_1)
  (canContain CabinetType AlarmClockType)
  (canContain CabinetType BookType)
  (canContain CabinetType BoxType)
  (canContain CabinetType CDType)
  (canContain CabinetType CellPhoneType)
  (canContain CabinetType CreditCardType)
  (canContain CabinetType KeyChainType)
  (canContain CabinetType LaptopType)
  (canContain CabinetType NewspaperType)
  (canContain CabinetType PenType)
  (canContain CabinetType PencilType)
  (canContain DeskType AlarmClockType)
  (canContain DeskType BookType)
  (canContain DeskType BoxType)
  (canContain DeskType CDType)
  (canContain DeskType CellPhoneType)
  (canContain DeskType CreditCardType)
  (canContain DeskType KeyChainType)
  (canContain DeskType LaptopType)
  (canContain DeskType NewspaperType)
  (canContain DeskType PenType)
  (canContain DeskType PencilType)
  (canContain DrawerType AlarmClockType)
  (canContain DrawerType BookType)
  (canContain DrawerType BoxType)
  (canContain DrawerType CDType)
  (canContain DrawerType CellPhoneType)
  (canContain DrawerType CreditCardType)
  (canContain DrawerType KeyChainType)
  (canContain DrawerType LaptopType)
  (canContain DrawerType NewspaperType)
  (canContain DrawerType PenType)
  (canContain DrawerType PencilType)
  (canContain GarbageCanType CDType)
  (canContain GarbageCanType CreditCardType)
  (canContain GarbageCanType NewspaperType)
  (canContain GarbageCanType PenType)
  (canContain GarbageCanType PencilType)
  (canContain SafeType AlarmClockType)
  (canContain SafeType BookType)
  (canContain SafeType BoxType)
  (canContain SafeType CDType)
  (canContain SafeType CellPhoneType)
  (canContain SafeType CreditCardType)
  (canContain SafeType KeyChainType)
  (canContain SafeType LaptopType)
  (canContain SafeType NewspaperType)
  (canContain SafeType PenType)
  (canContain SafeType PencilType)
  (canContain ShelfType AlarmClockType)
  (canContain ShelfType BookType)
  (canContain ShelfType BoxType)
  (canContain ShelfType CDType)
  (canContain ShelfType CellPhoneType)
  (canContain ShelfType CreditCardType)
  (canContain ShelfType KeyChainType)
  (canContain ShelfType LaptopType)
  (canContain ShelfType NewspaperType)
  (canContain ShelfType PenType)
  (canContain ShelfType PencilType)
  (canContain SideTableType AlarmClockType)
  (canContain SideTableType BookType)
  (canContain SideTableType BoxType)
  (canContain SideTableType CDType)
  (canContain SideTableType CellPhoneType)
  (canContain SideTableType CreditCardType)
  (canContain SideTableType KeyChainType)
  (canContain SideTableType LaptopType)
  (canContain SideTableType NewspaperType)
  (canContain SideTableType PenType)
  (canContain SideTableType PencilType)
  (canContain SofaType BookType)
  (canContain SofaType CellPhoneType)
  (canContain SofaType CreditCardType)
  (canContain SofaType KeyChainType)
  (canContain SofaType LaptopType)
  (canContain SofaType NewspaperType)
)
(:goal
                    (and
                        (exists (?r - receptacle)
                            (exists (?o1 - object)
                                (and
                                    (objectType ?o1 CreditCardType)
                                    (receptacleType ?r DrawerType)
                                    (inReceptacle ?o1 ?r)
                                    (exists (?o2 - object)
                                        (and
                                            (not (= ?o1 ?o2))
                                            (objectType ?o2 CreditCardType)
                                            (receptacleType ?r DrawerType)
                                            (inReceptacle ?o2 ?r)
                                        )
                                    )
                                )
                            )
                        )
                    )
                )
            )
