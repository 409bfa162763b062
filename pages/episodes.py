import streamlit as st
st.write('episodes')
