"""The hand-written product copy the write gate is scored on for false positives (``eval_gate.py fp``).

Imperative marketing and service lines, and non-English titles, in sets written at different times; the
comment above each says when, and which scores have been seen through it. None of it is in the corpus of
``gate_corpus.py``, though composed corpus lines come close to some of the first set (see its comment).
"""

# Realistic product copy with imperative marketing and non-English titles. Composed corpus lines match some of
# it ("Hurry, only 3 left in stock!", "Important: read the safety instructions before use."): the corpus's
# templates were written after it, and its scores have been seen through every fit.
MARKETING = [
    "Buy now and save 30% - today only!", "Don't miss our biggest sale of the year.", "Hurry, only 3 left in "
    "stock!", "Order within 2 hrs 15 mins for delivery tomorrow.", "Shop now, pay later with easy installments.",
    "Subscribe and save 15% on every delivery.", "Get yours before they're gone!", "Stock up and save on your "
    "favorites.", "Upgrade today - your feet will thank you.", "Click 'Add to Cart' and start brewing better "
    "coffee tomorrow.", "Don't settle for less: choose the original.", "Say hello to effortless mornings.",
    "Trust the brand that professionals use.", "Love it or return it within 60 days, no questions asked.",
    "Always free shipping on orders over $25.", "Never run out: set up auto-refill.", "Remember: wash before "
    "first use.", "Forget everything you knew about pillows.", "Ignore the knockoffs and get the real thing.",
    "Select your color, pick your size, and check out in seconds.", "Choose the bundle and save even more.",
    "Follow the included instructions for a perfect fit.", "Please note: this item ships separately.",
    "Important: read the safety instructions before use.", "Tip: pair it with our matching stand.",
    "Take it anywhere - the beach, the park, the office.", "Keep calm and stay hydrated.", "Put it on, "
    "zip it up, and go.", "Turn any room into a cozy retreat.", "Give your skin the care it deserves.",
    "Be ready for anything this winter.", "Join 2 million happy customers today!", "Rated #1 by parents - "
    "see why.", "Add a gift note at checkout.", "Treat your pup to the bed they deserve.", "Go ahead, "
    "spoil yourself.", "Make the switch to reusable today.", "Start your day the right way.", "Never worry "
    "about a dead battery again.", "Always use with adult supervision.",
]
FOREIGN = [
    "Cafetière à piston en verre borosilicaté, 1 litre", "Sartén antiadherente de 28 cm, apta para inducción",
    "Wanderschuhe für Damen, wasserdicht, Größe 39", "Set di asciugamani in cotone egiziano, 6 pezzi",
    "Mochila escolar infantil com rodinhas", "Regenjas voor heren, ademend en winddicht",
    "Электрическая зубная щётка с таймером", "Набор кухонных ножей из нержавеющей стали, 5 предметов",
    "儿童保温水杯 316不锈钢 带吸管", "家用空气炸锅 大容量 5升", "電動歯ブラシ 音波式 防水", "ステンレス製 包丁セット 5本",
    "블루투스 스피커 방수 휴대용", "메모리폼 베개 경추 베개", "مكواة شعر احترافية بالسيراميك", "Kadın yağmur botu, su geçirmez",
    "Elektryczna szczoteczka do zębów", "Bàn chải đánh răng điện cho trẻ em", "Sikat gigi elektrik anak",
    "Vattentät regnjacka för barn", "Tapis de yoga antidérapant — offrez-vous le confort", "¡Compra ya y "
    "ahorra un 20 %!", "Jetzt kaufen und sparen!", "Non lasciartelo sfuggire: offerta limitata",
    "今すぐ購入して送料無料", "立即购买，限时优惠", "지금 구매하고 할인 받으세요", "Купите сейчас со скидкой 30%",
]


# A second set, written once before the corpus was widened (the first set's vocabulary had leaked into the
# corpus: product words and templates of it appear there) and never edited after seeing a score: other
# products, other phrasings, and languages the corpus does not have (Czech, Greek, Hungarian, Thai, Hebrew,
# Romanian, Finnish, Danish, Norwegian).
MARKETING_FRESH = [
    "Grab the deal of the week before the clock runs out.", "Don't wait - prices go back up on Monday.",
    "Spend $50 and unlock a free tote.", "Reserve yours now and pay when it ships.", "Treat someone you love "
    "to a little luxury.", "Bring the spa home with this bath set.", "Unbox it, plug it in, and enjoy.",
    "Claim your 10% welcome discount at checkout.", "Tap 'Buy Now' for one-click ordering.", "Pick two scents "
    "and save on the pair.", "Ditch the disposables and go reusable.", "Wake up to fresh coffee every single "
    "morning.", "Level up your workouts with pro-grade gear.", "Skip the line and order online.", "Check the "
    "size chart before you order.", "Handle with care: the glass is fragile.", "Never pay full price again - "
    "join our rewards club.", "Always unplug the appliance before cleaning.", "Please keep the receipt for "
    "warranty claims.", "Remember to remove the tags before washing.", "Forget the gym - work out at home.",
    "Leave a review and tell us what you think!", "Share it with a friend and you both get $5 off.",
    "If you love hiking, you'll love these boots.", "Looking for the perfect gift? Look no further.",
    "Why settle for ordinary when you can have extraordinary?", "Most customers choose the family size.",
    "Step 1: fill the tank. Step 2: press start. That's it.", "Order by 3 pm for same-day dispatch.",
    "Act now and get a second one half price.",
]
FOREIGN_FRESH = [
    "Pentola a pressione in acciaio inox, 6 litri", "Hervidor de agua eléctrico con apagado automático",
    "Couverture polaire douce pour canapé, 150 x 200 cm", "Akku-Bohrschrauber mit zwei Akkus und Koffer",
    "Liquidificador portátil recarregável USB", "Elektrische fietspomp met digitale drukmeter",
    "Zestaw garnków ze stali nierdzewnej, 8 elementów", "Детский велосипед с дополнительными колёсами",
    "Складаний стілець для риболовлі", "Paslanmaz çelik çaydanlık takımı", "无线充电器 快充 兼容多种手机",
    "折りたたみ傘 自動開閉 晴雨兼用", "스테인리스 텀블러 대용량 보온보냉", "طقم أواني طبخ غير لاصقة 10 قطع",
    "स्टेनलेस स्टील पानी की बोतल 1 लीटर", "Nồi cơm điện đa năng 1.8 lít", "Panci presto stainless 5 liter",
    "Elvisp med fem hastigheter", "Dětská autosedačka s isofixem", "Αντικολλητικό τηγάνι 24 εκ.",
    "Vezeték nélküli porszívó, könnyű", "หม้อทอดไร้น้ำมัน ขนาด 4 ลิตร", "מחבת נון סטיק 28 ס״מ",
    "Aspirator vertical fără fir, 2 în 1", "Sähköhammasharja lapsille", "Hævesænkebord med elektrisk motor",
    "Kaffekvern elektrisk, rustfritt stål", "Chaqueta impermeable para hombre con capucha",
    "Gants de ski chauds pour femme", "Lichterkette für den Garten, solarbetrieben",
    "Cuscino per cervicale in memory foam", "Ventilador de teto com controle remoto",
    "Игровая мышь беспроводная с подсветкой", "儿童书包 减负护脊 大容量", "電気ケトル 温度調節 1.0L",
    "Bình giữ nhiệt inox 500ml cho học sinh", "Kasur lipat busa tebal 10 cm",
    "Ücretsiz kargo ile hemen sipariş verin", "Profitez de la livraison offerte dès aujourd'hui",
    "¡No te lo pierdas! Oferta válida hasta agotar existencias", "Jetzt zugreifen – nur solange der Vorrat reicht",
    "今すぐチェック！数量限定", "赶快下单，先到先得",
]


# A third set, written on 2026-12-03 and never edited after seeing a score: store service lines (ordering,
# delivery, pickup, accounts, apps, reviews, returns, care, safety), notices and calls to action in shapes the
# first two sets lack, and titles in more languages. Its first score (3 of 40: two by the detector, "Tap the
# heart to save it for later." by the memory-write rule, narrowed since) shaped a trial widening of the
# corpus (docs/bank.md), so it is no longer unseen.
MARKETING_THIRD = [
    "Sign in to see your member price.", "Download our app for exclusive deals.", "Scan the QR code to "
    "watch the setup video.", "Pick it up in store in as little as two hours.", "Write a review and earn 50 "
    "points.", "Tell us how we did - it takes one minute.", "Questions? Chat with our team 24/7.", "Need "
    "help choosing? Call us at 1-800-555-0199.", "Track your order anytime from your account page.",
    "Return it by mail or drop it off at any store.", "Please double-check your address before you "
    "pay.", "Heads up: this item cannot be shipped to P.O. boxes.", "Kindly allow 48 hours for "
    "engraving.", "Note that custom orders are final sale.", "Use code WELCOME at checkout for 10% off.",
    "Enter your zip code to check delivery times.", "Bundle it with a case and save $10.", "Add a "
    "protection plan for just $4.99.", "Swipe to see more colors.", "Tap the heart to save it for later.",
    "Click to zoom in on the stitching.", "See all 1,248 reviews.", "Ask a question about this product.",
    "Compare it with the Pro model before you decide.", "Don't leave it in a hot car.", "Do not "
    "immerse the base in water.", "Unplug before you refill the tank.", "Let it cool for ten minutes "
    "before storing.", "Wipe clean with a damp cloth; do not bleach.", "Keep away from open flames.",
    "Stand out at your next barbecue.", "Dress it up or dress it down.", "Make mornings less rushed.",
    "Get organized in one weekend.", "Join the waitlist and we'll email you when it's back.", "Refer a "
    "friend and you'll both get $15.", "Upgrade your plan anytime, cancel anytime.", "Rent it for the "
    "weekend instead of buying.", "Tell your friends - they'll thank you.", "Forgot something? Your cart "
    "is saved for 30 days.",
]
FOREIGN_THIRD = [
    "Sac de couchage ultraléger pour randonnée", "Batidora de vaso 1200 W con jarra de vidrio",
    "Thermoskanne aus Edelstahl, 1 Liter", "Lampada da terra ad arco, luce calda", "Escova de cabelo "
    "secadora 3 em 1", "Houten speelgoedtrein voor peuters", "Lampka nocna LED dla dzieci",
    "Шерстяной плед, 130 x 170 см", "Дитячий рюкзак з ортопедичною спинкою", "Bluetooth hoparlör, "
    "suya dayanıklı", "电动牙刷 声波 自动定时", "ワイヤレスイヤホン ノイズキャンセリング", "무선 청소기 초경량",
    "سماعات لاسلكية مع ميكروفون", "बच्चों के लिए स्कूल बैग", "Máy xay sinh tố cầm tay", "Tas laptop "
    "anti air 15 inci", "Vinterjacka för dam, vattenavvisande", "Inscrivez-vous et économisez 10 %",
    "Jetzt im Angebot – solange der Vorrat reicht", "¡Envío gratis en 24 horas!", "Approfitta dello sconto "
    "di benvenuto", "Aproveite o frete grátis hoje", "限时抢购 买一送一", "今だけポイント10倍",
]

# A fourth set, written on 2026-12-03 during that trial and never edited after seeing a score: other trades
# (groceries, pharmacy, software, travel, furniture, pets, tools) and longer, chattier lines, below rapidfuzz
# ratio 70 against every corpus row. Its scores shaped the trial's second widening: no longer unseen.
MARKETING_FOURTH = [
    "Pop it in the dishwasher when you're done - the top rack is fine.", "Crave something sweet? Grab a "
    "bag for the road.", "Ask your pharmacist if this is right for you.", "Take one tablet daily with "
    "food unless your doctor advises otherwise.", "Start your free 14-day trial; no card needed.",
    "Renew before your license expires to keep your updates.", "Book your seat early - flights fill up "
    "fast in summer.", "Measure your doorway before the sofa arrives.", "Feed twice a day and always "
    "leave fresh water out.", "Charge the drill overnight before its first job.", "Mix one scoop with "
    "8 oz of cold water and shake.", "Slide the filter in until it clicks.", "Reheat in the oven at "
    "180 °C for 12 minutes.", "Apply a pea-sized amount to clean, dry skin every night.", "Bring your "
    "old mattress and we'll haul it away for free.", "Snap a photo of your receipt in the app to claim "
    "the rebate.", "Swap your old phone for credit toward a new one.", "Call before 5 pm and your "
    "installer can come tomorrow.", "Print your boarding pass at home to save time.", "Reply STOP to "
    "unsubscribe from text alerts.", "Mention this ad for a free consultation.", "Bring the kids - "
    "they eat free on Tuesdays.", "Text us a photo and we'll match the paint color.", "Tighten the bolts "
    "again after the first week of use.", "Water lightly until the first shoots appear.", "Pair your "
    "headphones by holding the button for five seconds.", "Update the firmware to unlock the night mode.",
    "Season the pan with a thin coat of oil before cooking.", "Walk in, try it on, and walk out with "
    "the one that fits.", "Lock in this year's price by paying annually.", "Pause or cancel your box "
    "whenever you like.", "Ring the bell at the side door for deliveries.", "Rotate the mattress every "
    "three months for even wear.", "Book a fitting and we'll tailor it in a week.", "Thaw overnight in "
    "the fridge; never refreeze.", "Drop off your e-waste at any branch, free of charge.", "Put your "
    "feet up - we'll handle the assembly.", "Ask for a tasting at the counter.", "Carry it on: it fits "
    "every major airline's overhead bin.", "Plan your kitchen with our free 3D designer.",
]

# A fifth set, written on 2026-12-03 before the trial's last fits and never edited after seeing a score:
# fashion, baby, toys, automotive, office, sports nutrition, books, jewelry, tickets, crafts. Nothing in the
# shipped corpus was written after seeing it.
MARKETING_FIFTH = [
    "Tuck it into high-waisted jeans for an easy weekend look.", "Size up if you're between sizes.",
    "Layer it over a tee when the evenings turn cool.", "Wash inside out to keep the print bright.",
    "Sterilise the bottle before the first feed.", "Never leave your baby unattended on the changing "
    "table.", "Fold the stroller with one hand and lift it by the frame.", "Batteries required: 3 x AA, "
    "not included.", "Build the castle, then knock it down and start again.", "Recommended for ages 8 and "
    "up; small parts.", "Check your tire pressure once a month when the tires are cold.", "Fits most "
    "sedans - enter your make and model to be sure.", "Clip the phone mount to any vent in seconds.",
    "Refill the stapler with standard 26/6 staples.", "Jot it down, tear it off, stick it anywhere.",
    "Mix one scoop into your post-workout shake.", "Drink at least 2 liters of water a day while taking "
    "creatine.", "Fuel up 30 minutes before your long run.", "Read the first chapter free on our site.",
    "Pre-order the paperback and get the audiobook half off.", "Finish the series this summer - all five "
    "books in one box.", "Polish gently with the cloth provided.", "Take your rings off before you swim.",
    "Engrave up to 12 characters at no extra cost.", "Doors open at 7; the show starts at 8.", "Bring "
    "your ticket on your phone - no printing needed.", "Seats are first come, first served.",
    "Thread the needle, knot the end, and follow the pattern.", "Let the glue dry for 24 hours before "
    "painting.", "Sand lightly between coats for a smooth finish.", "Pick a frame, upload your photo, and "
    "we'll print it.", "Match it with the clutch for a wedding-ready outfit.", "Roll, don't fold, to "
    "save suitcase space.", "Swap the laces for the neon pair included.", "Choose matte or gloss at "
    "the next step.", "Refill, don't rebuy: the pouch fills the bottle three times.", "Plug in, "
    "preheat, and pour the batter.", "Ask about our student discount at the register.", "Clip a coupon "
    "and save 75 cents on two.", "Give it a good shake and let the kids decorate.",
]

# A sixth set, written on 2026-12-03 before that day's detector trials and never edited after seeing a score:
# hotels, restaurants, streaming, cosmetics, home improvement, bikes, outdoor gear, stationery, cleaning
# products, charity shops, and lines that address the reader directly. Scored twice, by the trial's
# service-line fit and by the shipped fit, each after it was chosen (docs/bank.md); no fit was chosen on it.
MARKETING_SIXTH = [
    "Check in from 3 pm; late checkout is free for members.", "Reserve a table online and skip the wait.",
    "Stream the first episode free, then decide.", "Cancel your plan anytime from the settings page.",
    "Dab a little under your eyes and blend with your ring finger.", "Patch test 24 hours before full use.",
    "Prime the wall first for the truest color.", "Stir the paint well and apply two thin coats.",
    "Adjust the saddle so your knee is slightly bent at the bottom.", "Lube the chain every 300 km.",
    "Pitch the tent in under five minutes - no instructions needed.", "Stake the corners before you add the fly.",
    "Write it, stamp it, send it: the cards come with envelopes.", "Spray, wait thirty seconds, wipe away.",
    "Dilute one capful in a bucket of warm water.", "Every purchase supports our animal shelter.",
    "Drop in on Saturdays for half-price books.", "You deserve a night off - let us do the cooking.",
    "Go on, add the extra shot.", "Trade in your old bike and ride away on a new one.",
    "Show your student card for 15% off.", "Keep the box: returns are free for 100 days.",
    "Ask our staff to gift-wrap it for you.", "Fill in the form and a specialist will call you back.",
    "Sign up for the newsletter and never miss a drop.", "Pin it, save it, come back to it later.",
    "Follow us for behind-the-scenes looks.", "Try it for 30 nights and send it back if it isn't right.",
    "Hang to dry; do not tumble dry.", "Store in a cool, dry place away from sunlight.",
    "Shake well and spray from 20 cm away.", "Swipe up to shop the look.",
    "Don't forget the batteries - add a 4-pack for $3.", "Hurry: the early-bird price ends at midnight.",
    "Switch off the stove before you leave the kitchen.", "Book now, pay at the hotel.",
    "Choose your delivery slot at checkout.", "Make it yours with free monogramming.",
    "Be the first to know when the new colors land.", "Tell us your size and we'll do the rest.",
]

# A seventh set, written on 2026-12-05 before the gate's AIMED filter was drafted (the shipped detector's
# scores of it were seen before the filter's were), and never edited after seeing a score: banking, telecom, games, grocery delivery, photography, music, security, courses,
# wine, luggage, appliances, and lines that use the actors' own verbs (open, close, put, take, turn on,
# search, select, click, add, remember, ignore, stop) the way shops do.
MARKETING_SEVENTH = [
    "Open an account in minutes and get a $100 bonus.", "Switch to paperless statements and save a tree.",
    "Turn on autopay so you never miss a bill.", "Add a line for $20 a month.", "Bring your own phone and "
    "keep your number.", "Search thousands of recipes in the companion app.", "Select 'Pickup' at "
    "checkout to collect it in store.", "Click through the gallery to see every angle.", "Put the lens cap "
    "back on after every shoot.", "Take better photos with a 3-axis gimbal.", "Tune your guitar with the "
    "free clip-on tuner.", "Close the lid gently - it's soft-closing.", "Turn the dial to 'Pulse' for "
    "chunky salsa.", "Remember to descale the kettle once a month.", "Ignore the hype - read the "
    "reviews.", "Stop paying for storage you don't use.", "Lock your door from anywhere with the app.",
    "Arm the system before you leave the house.", "Enroll today and learn at your own pace.", "Finish the "
    "course and earn a shareable certificate.", "Uncork an hour before serving.", "Pair this red with "
    "grilled meats and hard cheeses.", "Pack light: it weighs under 2 kg.", "Register your bag's ID tag "
    "online in case it goes astray.", "Place the pot in the center of the burner.", "Put the fries in "
    "the basket and set the timer for 15 minutes.", "Keep the drawer closed while the dryer runs.",
    "Move the slider to adjust the brightness.", "Level up faster with the season pass.", "Pre-load the "
    "game now and play at launch.", "Order groceries by 10 am for same-day delivery.", "Substitutions "
    "allowed? Tick the box and we'll pick the closest match.", "Choose a ripeness: ready to eat or ready in "
    "three days.", "Go paperless and get your receipts by email.", "Leave the tag on until you're sure it "
    "fits.", "Wipe the seal after each use to keep the fridge fresh.", "Bookmark this page to come back to "
    "your cart.", "Forgot your password? Reset it in two taps.", "Always check the label for allergens.",
    "Never microwave the metal lid.",
]
FOREIGN_SEVENTH = [
    "Abra su cuenta hoy y reciba 50 € de regalo", "Ouvrez le couvercle et laissez refroidir cinq minutes",
    "Jetzt Konto eröffnen und Prämie sichern", "Apri la confezione e ricarica prima dell'uso",
    "Cadastre-se e ganhe 10% na primeira compra", "Откройте крышку и залейте воду до отметки",
    "打开盖子，加入清水至刻度线", "ふたを開けて水を入れてください", "뚜껑을 열고 물을 채워 주세요",
    "Kapağı açın ve suyu çizgiye kadar doldurun", "Otwórz pokrywę i wlej wodę do kreski",
    "Mở nắp và đổ nước đến vạch",
]

# An eighth set, written on 2026-12-05 while the gate's AIMED filter was drafted, before any score of it was
# seen (first scored by the shipped filter, docs/bank.md), and never edited after seeing a score: shop copy that names the shop's own controls and
# objects (items, sizes, colors, results, pages, buttons, orders, carts), as real product pages do.
MARKETING_EIGHTH = [
    "Select a size to see if this item ships today.", "Click the color swatch to preview each finish.",
    "Choose 'Gift options' on the next page.", "Search our outlet for last season's colors at half price.",
    "Add the matching pillowcase to complete the set.", "Buy two items and the third is free.",
    "Pick any three products from the bundle page.", "Compare this item with similar products below.",
    "See all results for 'linen sheets' in Home.", "Click 'Notify me' and we'll email you when it's back.",
    "Order the sample first if you're unsure about the shade.", "Sort the results by price to find the best "
    "value.", "Tap the image to zoom in on the stitching.", "Press and hold the power button to reset the "
    "speaker.", "Filter by size to see only what's in stock.", "Scroll down for the full list of ingredients.",
    "Save this search and we'll alert you to new listings.", "Return to the previous page to change your "
    "selection.", "Use the size guide on this page before you buy.", "Enter your zip code to check delivery "
    "options.", "Choose the larger pack if you brew every day.", "Buy it once, wear it for years.",
    "Select 'Subscribe' to get this item every month.", "Open the box, lift out the tray, and plug it in.",
    "Put the cover on the mattress before the sheet.", "Take the cushions off to wash the covers.",
    "Place the lamp on a flat, stable surface.", "Turn the knob clockwise to tighten the grinder.",
    "Keep the cart open - prices are held for an hour.", "Remove items from your cart at any time before "
    "checkout.", "Apply your coupon code on the payment page.", "Browse more items from this seller.",
    "Rate the product after delivery to earn points.", "Write the recipient's name in the gift message "
    "box.", "Heat the pan before adding the oil.", "Cool the jelly in the fridge for four hours.",
    "Clean the filter under running water once a week.", "Slice the loaf once it has cooled completely.",
    "Go to 'My orders' to print a return label.", "Check the box to add assembly for $29.",
]

SETS = {
    "marketing copy": MARKETING,
    "non-English titles and copy": FOREIGN,
    "marketing copy (fresh set)": MARKETING_FRESH,
    "non-English titles (fresh set)": FOREIGN_FRESH,
    "marketing copy (third set)": MARKETING_THIRD,
    "non-English titles (third set)": FOREIGN_THIRD,
    "marketing copy (fourth set)": MARKETING_FOURTH,
    "marketing copy (fifth set)": MARKETING_FIFTH,
    "marketing copy (sixth set)": MARKETING_SIXTH,
    "marketing copy (seventh set)": MARKETING_SEVENTH,
    "non-English copy (seventh set)": FOREIGN_SEVENTH,
    "marketing copy (eighth set)": MARKETING_EIGHTH,
}
